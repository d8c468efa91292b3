"""Tooling around the library, not part of a method or the pipeline's data path: the
benchmark report (``bench_record``), the reference SelfCheckGPT package run offline for parity
tests and benchmarks (``reference``), the environment a published result names
(``environment``), the offline HTML rendering of DVC plots (``plots_html``) and where ``make
install`` takes torch from (``torch_source``, standard library only: it runs before hallulab is
installed)."""
