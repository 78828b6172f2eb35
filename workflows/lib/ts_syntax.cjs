// Syntax check of one TypeScript file with the project's own compiler, for syntax_check.py.
//
//   node ts_syntax.cjs TYPESCRIPT_PACKAGE_DIR FILE
//
// Exit 0 when FILE parses; 1 on a syntax error, with one line on stderr ("line N: what").
// Only the compiler's syntactic diagnostics count: a per-file type check would see every
// import it cannot resolve outside the project's build as an error of the file, and Tier 2 is
// a parse check (the verifier and the project's own build judge the types).
"use strict";
const fs = require("fs");
const [packageDir, file] = process.argv.slice(2);
const ts = require(packageDir);
const text = fs.readFileSync(file, "utf8");
const result = ts.transpileModule(text, {
  fileName: file,
  reportDiagnostics: true,
  compilerOptions: { jsx: ts.JsxEmit.Preserve, noEmit: false },
});
const errors = (result.diagnostics || []).filter(
  (d) => d.category === ts.DiagnosticCategory.Error && d.file,
);
if (errors.length > 0) {
  const first = errors[0];
  const { line } = first.file.getLineAndCharacterOfPosition(first.start || 0);
  const message = ts.flattenDiagnosticMessageText(first.messageText, " ");
  process.stderr.write(`line ${line + 1}: TS${first.code}: ${message}\n`);
  process.exit(1);
}
