"""The pack as data: documents, their frontmatter as typed specs, their blocks and steps."""
