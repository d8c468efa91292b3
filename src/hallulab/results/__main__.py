"""``python -m hallulab.results``: publish a run's results file, or import a kept one
(:func:`hallulab.results.published.main`)."""

from hallulab.results.published import main

raise SystemExit(main())
