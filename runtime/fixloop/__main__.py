from fixloop.cli.main import main

raise SystemExit(main())
