from editors.adapters.cli import main

raise SystemExit(main())
