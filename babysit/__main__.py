from babysit.cli import main

raise SystemExit(main())
