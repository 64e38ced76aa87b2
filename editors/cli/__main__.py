from editors.cli import main

raise SystemExit(main())
