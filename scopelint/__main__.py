from scopelint.cli import main

raise SystemExit(main())
