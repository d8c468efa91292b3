"""Ensemble: one score per unit from several methods' scores at a level they share.

UQLM (Bouchard and Chauhan, 2025) ships an ensemble of black-box, white-box and judge
scorers; hallulab's eleven methods otherwise each score alone. The ensemble reads the unit
scores of its members (``ensemble.members``: a list of ``{method, variant}``, each a
registered method's variant that scores units at ``ensemble.level``) and combines them two
ways (``ensemble.combiners``):

* ``rank_mean`` (unsupervised, no label read): each member's scores become percentile ranks
  over the data set's units, ``r_m(u) = rank_m(u) / n_m`` (ties averaged), and

      s(u) = (1 / |M(u)|) * sum_{m in M(u)} r_m(u)

  over the members ``M(u)`` that scored unit ``u``; ranks make members on different scales
  (log-probabilities, AUC-like frequencies, +inf) commensurable.
* ``logistic_cv<F>`` (supervised, cross-fitted): an L2-penalised logistic regression on the
  members' ranks, ``s(u) = b + sum_m w_m r_m(u)`` (the log-odds), the minimiser of

      min_{w, b}  -sum_u [y_u log p_u + (1 - y_u) log(1 - p_u)] + (lambda / 2) ||w||^2

  fit by scikit-learn's ``LogisticRegression`` (Pedregosa et al., 2011) with ``C = 1 / lambda``,
  the intercept unpenalised and the newton-cholesky solver at ``tol=1e-14``
  (:mod:`hallulab.methods.ensemble.logistic` maps each parameter). The labelled
  records are split into F folds (seeded); the units of each fold are scored by the model fit
  on the other folds' labels only, so no unit's score has seen its own label (or any label
  of its record) and the evaluation over every record stays honest. Records without labels
  get the model fit on every labelled record. y is the evaluation's positive class
  (label > 0.499: NonFact at sentence level, unsupported / wrong / unfamiliar elsewhere).

Beside its own variants it writes each member's scores as they are, as the variant
``member.<method>.<variant>``: the evaluation scores them on the same units with the same
resamples and reports each combiner's paired bootstrap difference against each member
(:mod:`hallulab.evaluation.paired`), which answers "does the ensemble beat its best member?"
with an interval. (At sentence level a passage's score is then the mean of its sentence
scores for the members too, as for the ensemble.)

A member its method did not write under the run's settings (a sweep that leaves out
``ngram_n1_max``) is left out and named in the diagnostics (``members_absent``).

No model call and no score step: one cheap aggregate step over the ``members_ensemble``
stages' copies of the members' scores (:mod:`hallulab.pipeline.members`).
"""

from hallulab.pipeline.spec import KnobSection, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="ensemble",
    title="Ensemble of methods (rank mean; cross-fitted logistic regression)",
    paper="hallulab; after UQLM's ensemble scorer (Bouchard and Chauhan, 2025)",
    section="rank mean and stacked logistic regression",
    level="sentence",
    score=None,
    aggregate=StepInputs(params=("ensemble",)),
    order=95,
    benchmark_variants=("rank_mean", "logistic_cv5"),  # the unsupervised and the cross-fitted combination
    combines="ensemble.members",
    knobs=(KnobSection("ensemble", "knobs:EnsembleKnobs"),),
)
