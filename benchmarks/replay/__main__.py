from benchmarks.replay.runner import main

raise SystemExit(main())
