from babysit.entry import main

raise SystemExit(main())
