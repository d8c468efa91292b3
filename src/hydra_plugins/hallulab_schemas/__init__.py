"""hallulab's knob classes as Hydra ConfigStore schemas, in every process that composes ``conf/``.

Hydra imports every module of the ``hydra_plugins`` namespace package when it first looks for
plugins (in any composition: ``hallulab``'s own, and the one ``dvc exp run`` makes into
``params.yaml``, which puts the repository root on the path for this search). Importing this
one stores each knob class's schema as ``schema/<section path>``
(:func:`hallulab.pipeline.settings_schema.register`), which the files under ``conf/`` name in
their defaults lists. It defines no plugin class.
"""

from hallulab.pipeline.settings_schema import register

register()
