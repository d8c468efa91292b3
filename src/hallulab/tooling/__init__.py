"""Tooling around the library, not part of a method or the pipeline's data path: the
benchmark report (``bench_record``), the reference SelfCheckGPT package run offline for parity
tests and benchmarks (``reference``), the environment a published result names
(``environment``) and the offline HTML rendering of DVC plots (``plots_html``)."""
