"""Calibrated probabilities and a flag: the maps equal scikit-learn's estimators, no unit is
calibrated on itself, the threshold rules pick what they say, a calibration file refuses what
it does not fit, and the committed calibrations are what their command writes."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hallulab.benchmark.units import CellUnits
from hallulab.calibration.fit import CalibrationError, CalibrationSettings, cross_fitted, fit_calibration
from hallulab.calibration.maps import fit_isotonic, fit_platt
from hallulab.calibration.measure import (
    best_f1_threshold,
    brier,
    expected_calibration_error,
    precision_target_threshold,
    reliability_bins,
)
from hallulab.calibration.stored import (
    calibrated,
    outside_fitted_range,
    range_warning,
    read_calibration,
    resolve_calibration,
    sealed_text,
    write_calibration,
)
from hallulab.cli import main as cli_main
from tests.workspace import environment

REPO = Path(__file__).resolve().parents[1]
SCORES = np.array([0.1, 0.35, 0.4, 0.8, 0.2, 0.9, 0.7, 0.05, 0.6, 0.3])
LABELS = np.array([0, 0, 1, 1, 0, 1, 0, 0, 1, 1], dtype=bool)


def _units(n_records: int = 40, per_record: int = 3, seed: int = 1) -> CellUnits:
    rng = np.random.default_rng(seed)
    records = tuple(f"r{i:02d}" for i in range(n_records) for _ in range(per_record))
    positive = rng.random(len(records)) < 0.4
    scores = positive * 1.0 + rng.normal(0.0, 0.8, len(records))
    return CellUnits("sentence", "v", records, tuple(range(len(records))), positive, scores)


def test_the_maps_predict_as_scikit_learns_estimators() -> None:
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    new = np.array([-1.0, 0.0, 0.15, 0.37, 0.5, 0.75, 0.85, 2.0])
    isotonic = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(SCORES, LABELS.astype(float))
    np.testing.assert_allclose(fit_isotonic(SCORES, LABELS)(new), isotonic.predict(new), atol=1e-12)
    logistic = LogisticRegression(C=np.inf, max_iter=1000).fit(SCORES.reshape(-1, 1), LABELS)
    np.testing.assert_allclose(fit_platt(SCORES, LABELS)(new), logistic.predict_proba(new.reshape(-1, 1))[:, 1])
    # the hand case: the pool-adjacent-violators means of the sorted labels
    assert list(
        fit_isotonic(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 1, 0, 1], dtype=bool))(np.array([1.0, 2.0, 3.0, 4.0]))
    ) == [0.0, 0.5, 0.5, 1.0]


def test_platt_parameters_are_kept_to_their_stated_digits() -> None:
    """The committed calibration files must be the same bytes on every CPU: L-BFGS's last bits
    differ between vector kernels, so the parameters are rounded well below its tolerance."""
    from hallulab.calibration.maps import PLATT_DIGITS

    fitted = fit_platt(SCORES, LABELS)
    for value in (fitted.a, fitted.b):
        assert value == float(f"{value:.{PLATT_DIGITS}g}")
        assert len(repr(abs(value)).replace(".", "").lstrip("0").split("e")[0]) <= PLATT_DIGITS


def test_no_unit_is_calibrated_on_itself() -> None:
    """Flipping one unit's label leaves its own cross-fitted probability as it was (its record's
    group never fits the map it is given), and moves another group's."""
    units = _units()
    before = cross_fitted("isotonic", units, 5)
    flipped = units.positive.copy()
    flipped[7] = not flipped[7]
    changed = CellUnits(units.level, units.variant, units.records, units.units, flipped, units.scores)
    after = cross_fitted("isotonic", changed, 5)
    same_record = [i for i, r in enumerate(units.records) if r == units.records[7]]
    assert np.array_equal(before[same_record], after[same_record])
    assert not np.array_equal(before, after)


def test_the_threshold_rules_on_a_constructed_case() -> None:
    p = np.array([0.1, 0.2, 0.3, 0.6, 0.7, 0.9])
    y = np.array([0, 0, 1, 0, 1, 1], dtype=bool)
    # t = 0.3 flags 4 with 3 positives: F1 = 6/7, the best (t = 0.7: 2 of 3, F1 = 0.8)
    assert best_f1_threshold(p, y) == 0.3
    assert precision_target_threshold(p, y, 0.9) == 0.7  # the lowest t whose flags are all positive
    assert precision_target_threshold(p, y, 0.7) == 0.3  # 3 of 4 = 0.75
    assert precision_target_threshold(np.array([0.5]), np.array([False]), 0.5) is None


def test_brier_and_ece_by_hand() -> None:
    p, y, ones = np.array([0.05, 0.15, 0.95]), np.array([0, 1, 1], dtype=bool), np.ones((1, 3))
    assert brier(p, y, ones)[0] == pytest.approx((0.05**2 + 0.85**2 + 0.05**2) / 3)
    # bins [0, 0.1): 0.05 vs 0; [0.1, 0.2): 0.15 vs 1; [0.9, 1]: 0.95 vs 1
    assert expected_calibration_error(p, y, ones)[0] == pytest.approx((0.05 + 0.85 + 0.05) / 3)
    # the reliability diagram's points: (mean probability, share hallucinated, units) per bin
    assert reliability_bins(np.array([0.05, 0.08, 0.95]), np.array([0, 1, 1], dtype=bool)) == [
        [0.065, 0.5, 2],
        [0.95, 1.0, 1],
    ]


def test_a_calibration_file_refuses_what_it_does_not_fit(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    write_calibration(path, fit_calibration("toyset", "selfcheck_ngram", _units(), CalibrationSettings()))
    stored = read_calibration(path)
    scores = pd.DataFrame(
        {"method": "selfcheck_ngram", "variant": ["v", "v", "w"], "level": "sentence", "score": [-1.0, 2.0, 2.0]}
    )
    out = calibrated(scores, stored)
    assert out["probability"].iloc[0] < out["probability"].iloc[1] and np.isnan(out["probability"].iloc[2])
    assert out["flag"].iloc[1] and pd.isna(out["flag"].iloc[2])
    assert out["calibration"].iloc[0] == "toyset/selfcheck_ngram/v@sentence (isotonic)"
    with pytest.raises(CalibrationError, match="a calibration of selfcheck_ngram, not of ccp"):
        calibrated(scores.assign(method="ccp"), stored)
    with pytest.raises(CalibrationError, match="made for v at the sentence level; the scores hold w@response"):
        calibrated(scores.assign(variant="w", level="response"), stored)
    text = path.read_text()
    edited = json.loads(text)
    edited["threshold"] = 0.01
    path.write_text(json.dumps(edited))
    with pytest.raises(CalibrationError, match="does not match its sha256"):
        read_calibration(path)
    older = json.loads(text)
    older["format"] = 0
    path.write_text(json.dumps(older))
    with pytest.raises(CalibrationError, match="calibration format 0"):
        read_calibration(path)
    one_class = _units()
    with pytest.raises(CalibrationError, match="one class only"):
        fit_calibration(
            "toyset",
            "m",
            CellUnits(
                "sentence", "v", one_class.records, one_class.units, one_class.positive & False, one_class.scores
            ),
            CalibrationSettings(),
        )


def test_the_committed_calibrations_are_what_their_command_writes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hallulab.calibration", "--check"],
        cwd=REPO,
        env=environment(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_command_adds_the_calibrated_probability_and_flag(tmp_path: Path) -> None:
    """`hallulab score --calibration wikibio` (the README's line): the committed WikiBio
    calibration of n-gram's unigram max gives each of its sentence rows a probability that
    rises with the score and a flag at its threshold; other rows get none. A data set without a
    calibration of the method, or a file of another method, is one line before any scoring."""
    records = REPO / "data" / "toy" / "passages.jsonl"

    def score(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "hallulab.cli", "score", str(records), *args]
        return subprocess.run(command, cwd=tmp_path, env=environment(), capture_output=True, text=True)

    done = score("--method", "selfcheck_ngram", "--calibration", "wikibio", "-o", "out.csv")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "calibration wikibio/selfcheck_ngram/ngram_n1_max@sentence (isotonic)" in done.stdout
    out = pd.read_csv(tmp_path / "out.csv")
    mine = out[(out["variant"] == "ngram_n1_max") & (out["level"] == "sentence")].sort_values("score")
    assert mine["probability"].between(0, 1).all() and mine["probability"].is_monotonic_increasing
    stored = json.loads((REPO / "results/calibration/wikibio/selfcheck_ngram.ngram_n1_max.json").read_text())
    assert list(mine["flag"]) == [p >= stored["threshold"] for p in mine["probability"]]
    assert out.loc[~out.index.isin(mine.index), "probability"].isna().all()
    missing = score("--method", "selfcheck_ngram", "--calibration", "concept7", "-o", "x.csv")
    assert missing.returncode == 2 and "no committed calibration of selfcheck_ngram (ngram_n1_max)" in missing.stderr
    other = REPO / "results/calibration/nq_open/length.length_tokens.json"
    wrong = score("--method", "selfcheck_ngram", "--calibration", str(other), "-o", "y.csv")
    assert wrong.returncode == 2 and "a calibration of length, not of selfcheck_ngram" in wrong.stderr
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "y.csv").exists()


def _how_to_blocks() -> list[tuple[str, str]]:
    """docs/how-to/calibrate.md's fenced blocks, (language tag, content), in page order."""
    page = (REPO / "docs/how-to/calibrate.md").read_text(encoding="utf-8")
    return re.findall(r"^```(\w+)\n(.*?)^```$", page, flags=re.DOTALL | re.MULTILINE)


def test_a_calibration_fitted_on_ones_own_labelled_scores_is_taken_by_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/how-to/calibrate.md's steps, its own commands: `hallulab calibrate` on scored,
    labelled records writes a file and prints what the page shows after it (the held-out
    figures with their intervals); `hallulab score --calibration` takes that file;
    `hallulab calibrations` lists the committed ones; a variant the scores lack is one line."""
    (tmp_path / "data/toy").mkdir(parents=True)
    shutil.copy(REPO / "data/toy/passages.jsonl", tmp_path / "data/toy/passages.jsonl")
    monkeypatch.chdir(tmp_path)  # the commands run in-process (hallulab.cli.main), from a user's folder

    def hallulab(*args: str) -> tuple[int, str, str]:
        status = cli_main(list(args))
        said = capsys.readouterr()
        return status, said.out, said.err

    blocks = _how_to_blocks()
    printed: dict[str, str] = {}
    for index, (tag, code) in enumerate(blocks):
        for line in code.splitlines() if tag == "bash" else ():
            status, out, err = hallulab(*shlex.split(line)[1:])
            assert status == 0, f"{line}: {err[-2000:]}"
            printed[line] = out
            if line.startswith("hallulab calibrate "):
                assert blocks[index + 1] == ("text", out), "the page shows another output of its calibrate command"
    stored = read_calibration(tmp_path / "mine.json")
    assert (stored.dataset, stored.variant, stored.level) == ("passages", "ngram_n1_max", "sentence")
    assert pd.read_csv(tmp_path / "calibrated.csv")["calibration"].dropna().unique().tolist() == [stored.name]
    assert "results/calibration/wikibio/selfcheck_ngram.ngram_n1_max.json" in printed["hallulab calibrations"]
    status, _, err = hallulab(
        "calibrate", "labelled-scores.csv", "--records", "data/toy/passages.jsonl", "--variant", "nope", "-o", "x.json"
    )
    assert status == 2 and "no variant 'nope'; it holds ngram_n1_avg, ngram_n1_max" in err


def test_the_readme_calibrated_command_warns_that_its_scores_are_outside_the_fitted_range(tmp_path: Path) -> None:
    """The README's claim about its own records: scored with the WikiBio calibration, every
    sentence score lies below the scores it was fitted on, and the command says so."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    heredoc = readme.split("cat > records.jsonl <<'EOF'\n", 1)[1].split("\nEOF\n", 1)[0]
    (tmp_path / "records.jsonl").write_text(heredoc + "\n", encoding="utf-8")
    command = "hallulab score records.jsonl --method selfcheck_ngram --calibration wikibio -o calibrated.csv"
    assert f"```bash\n{command}\n```" in readme
    done = subprocess.run(
        [sys.executable, "-m", "hallulab.cli", *command.split()[1:]],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "4 of 4 scores lie outside the scores it was fitted on" in done.stderr
    out = pd.read_csv(tmp_path / "calibrated.csv")
    low = read_calibration(REPO / "results/calibration/wikibio/selfcheck_ngram.ngram_n1_max.json").fitted_range[0]
    assert (out.loc[out["calibration"].notna(), "score"] < low).all()


@pytest.fixture(scope="module")
def fitted_content() -> dict[str, dict[str, object]]:
    """The content (no sha256) of a calibration file of each kind, fitted once."""
    contents = {}
    for kind in ("isotonic", "platt"):
        calibration = fit_calibration("toyset", "selfcheck_ngram", _units(), CalibrationSettings(kind=kind))
        contents[kind] = json.loads(sealed_text({"format": 1, **calibration.to_dict()}))
        del contents[kind]["sha256"]
    return contents


def _resealed(path: Path, content: dict[str, object]) -> Path:
    """``content`` written to ``path`` with its hash recomputed by the writer's own sealing,
    so only the reader's content check can refuse it."""
    path.write_text(sealed_text(content), encoding="utf-8")
    return path


def _edit(content: dict[str, object], dotted: str, value: object) -> dict[str, object]:
    edited = json.loads(json.dumps(content))
    *parents, last = dotted.split(".")
    target = edited
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return edited


@pytest.mark.parametrize(
    ("kind", "dotted", "value", "field", "problem"),
    [
        ("isotonic", "threshold", float("nan"), "threshold", "nan is not a finite number"),
        ("isotonic", "threshold", 5, "threshold", "5.0 is not a probability in [0, 1]"),
        ("isotonic", "threshold", -0.1, "threshold", "-0.1 is not a probability in [0, 1]"),
        ("platt", "threshold", float("inf"), "threshold", "inf is not a finite number"),
        ("isotonic", "maps.isotonic.y.1", float("nan"), "maps.isotonic.y[1]", "nan is not a finite number"),
        ("isotonic", "maps.isotonic.y.0", 1.5, "maps.isotonic.y[0]", "1.5 is not a probability in [0, 1]"),
        ("isotonic", "maps.isotonic.x.1", -50.0, "maps.isotonic.x[1]", "does not exceed x[0]"),
        ("isotonic", "maps.isotonic.x.2", "3", "maps.isotonic.x[2]", "'3' is not a number"),
        ("platt", "maps.platt.a", float("nan"), "maps.platt.a", "nan is not a finite number"),
        ("platt", "maps.platt", {"a": 1.0}, "maps.platt.b", "None is not a number"),
        ("isotonic", "scaling.0", float("nan"), "scaling[0]", "nan is not a finite number"),
        ("isotonic", "scaling", [2.0, 1.0], "scaling", "lowest 2.0 above highest 1.0"),
        ("isotonic", "settings.kind", "spline", "settings.kind", "'spline' is not one of"),
        ("isotonic", "method", 7, "method", "missing or not a non-empty string"),
    ],
)
def test_a_calibration_file_with_a_recomputed_hash_is_refused_for_bad_content(
    tmp_path: Path,
    fitted_content: dict[str, dict[str, object]],
    kind: str,
    dotted: str,
    value: object,
    field: str,
    problem: str,
) -> None:
    """A NaN or out-of-range threshold (every flag silently False), a NaN or out-of-order
    knot (probability NaN, or wrong), a NaN scaling (the out-of-range warning gone): each is
    one line naming the file and the field, though the file's sha256 matches its content."""
    path = _resealed(tmp_path / "bad.json", _edit(fitted_content[kind], dotted, value))
    with pytest.raises(CalibrationError) as refused:
        read_calibration(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: field {field!r}: ") and problem in message and "\n" not in message


def test_a_threshold_no_probability_reaches_is_refused_and_never_written(
    tmp_path: Path, fitted_content: dict[str, dict[str, object]]
) -> None:
    """A threshold above the isotonic map's last value would leave every flag False; one below
    its first flags every unit (a rule may choose that) and is read."""
    maps = fitted_content["isotonic"]["maps"]
    assert isinstance(maps, dict)
    y = [0.1 + 0.7 * value for value in maps["isotonic"]["y"]]  # probabilities from 0.1 to 0.8
    content = _edit(fitted_content["isotonic"], "maps.isotonic.y", y)
    above = _resealed(tmp_path / "above.json", _edit(content, "threshold", 0.9))
    with pytest.raises(CalibrationError, match=r"field 'threshold': 0\.9 is above 0\.7999+, the highest probability"):
        read_calibration(above)
    below = _resealed(tmp_path / "below.json", _edit(content, "threshold", 0.05))
    assert read_calibration(below).threshold == 0.05
    calibration = fit_calibration("toyset", "selfcheck_ngram", _units(), CalibrationSettings())
    with pytest.raises(CalibrationError, match=r"field 'threshold': 5\.0 is not a probability"):
        write_calibration(tmp_path / "never.json", dataclasses.replace(calibration, threshold=5.0))
    assert not (tmp_path / "never.json").exists()


def test_the_out_of_range_warning_says_what_each_kind_gives_there(
    tmp_path: Path, fitted_content: dict[str, dict[str, object]]
) -> None:
    """Beyond the fitted scores isotonic holds the value at the nearest end; Platt extrapolates."""
    isotonic = read_calibration(_resealed(tmp_path / "i.json", fitted_content["isotonic"]))
    platt = read_calibration(_resealed(tmp_path / "p.json", fitted_content["platt"]))
    scores = pd.DataFrame({"method": "selfcheck_ngram", "variant": "v", "level": "sentence", "score": [-9.0, 9.0]})
    for stored in (isotonic, platt):
        out = calibrated(scores, stored)
        assert outside_fitted_range(out, stored) == 2
    assert "value at the nearest end of that range" in range_warning(isotonic, 2, 2)
    said = range_warning(platt, 2, 2)
    assert "extrapolated beyond that range" in said and "nearest end" not in said
    assert said.startswith("calibration toyset/selfcheck_ngram/v@sentence (platt): 2 of 2 scores lie outside")
    probability = calibrated(scores, platt)["probability"]
    assert probability.iloc[0] < platt.probability_map(np.array([platt.fitted_range[0]]))[0]


def _labelled_files(folder: Path, *, level: str = "sentence", sentences: bool = True) -> tuple[Path, Path]:
    """Labelled records and a file of their scores as `hallulab score` writes it (scores that
    rise with the label, plus noise): 16 records, sentence labels (n-gram's unigram max) or
    response labels (length's token count, records with or without ``sentences``)."""
    rng = np.random.default_rng(3)
    records, rows = [], []
    for r in range(16):
        rid, texts = f"q{r}", [f"Sentence {i} of record {r}." for i in range(3)]
        record: dict[str, object] = {"id": rid, "prompt": "Tell me.", "response": " ".join(texts)}
        if level == "sentence":
            labels = [float(rng.random() < 0.4) for _ in texts]
            record |= {"sentences": texts, "labels": labels}
            for i, label in enumerate(labels):
                score = label + rng.normal(0.0, 0.7)
                rows.append(("selfcheck_ngram", "ngram_n1_max", "sentence", rid, f"{rid}#sentence{i}", i, i, score))
        else:
            label = float(r % 2)
            record["response_label"] = label
            if sentences:
                record["sentences"] = texts
            rows.append(("length", "length_tokens", "response", rid, f"{rid}#response", 0, None, label + rng.normal()))
        records.append(record)
    records_path, scores_path = folder / "records.jsonl", folder / "scores.csv"
    records_path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    columns = ["method", "variant", "level", "record_id", "unit_id", "unit_index", "sentence_index", "score"]
    pd.DataFrame(rows, columns=columns).assign(start=None, end=None).to_csv(scores_path, index=False)
    return scores_path, records_path


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--rule", "precision", "--target-precision", "1.5"), "--target-precision 1.5: a precision is a number in"),
        (("--target-precision", "0"), "--target-precision 0.0: a precision is a number in (0, 1]"),
        (("--target-precision", "nan"), "--target-precision nan: a precision is a number in (0, 1]"),
        (("-o", "x.csv"), "-o x.csv: a calibration is written as JSON; name a .json file, not .csv"),
        (("-o", "adir.json"), "-o adir.json: is a folder; name a file to write"),
        (("--records", "adir.json"), "--records adir.json: is a folder; name the file"),
        (("--records", "none.jsonl"), "--records none.jsonl: no such file"),
    ],
)
def test_calibrate_refuses_a_bad_flag_in_one_line_before_any_work(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: tuple[str, ...],
    said: str,
) -> None:
    """A target precision outside (0, 1], an output that is no .json file, a folder where a
    file is named: `hallulab calibrate` exits 2 with one line, having read and written nothing."""
    import hallulab.calibration.own_data as own_data

    monkeypatch.chdir(tmp_path)
    _labelled_files(tmp_path)
    (tmp_path / "adir.json").mkdir()

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the calibration began")

    monkeypatch.setattr(own_data, "calibrate_scored", no_work)
    status = cli_main(["calibrate", "scores.csv", "--records", "records.jsonl", "-o", "mine.json", *flags])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(f"hallulab calibrate: error: {said}") and err.count("\n") == 1, err
    assert not (tmp_path / "mine.json").exists() and not (tmp_path / "x.csv").exists()


def test_score_names_a_folder_given_as_its_calibration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _, records = _labelled_files(tmp_path)
    (tmp_path / "adir.json").mkdir()
    command = ["score", str(records), "--method", "selfcheck_ngram", "--calibration", "adir.json", "-o", "c.csv"]
    assert cli_main(command) == 2
    assert capsys.readouterr().err == (
        "hallulab score: error: calibration adir.json: is a folder; name a calibration file\n"
    )


def test_calibrations_names_each_damaged_file_and_lists_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Beside a good calibration: a truncated one, one without its held-out figures (its hash
    recomputed) and a stray file that is no JSON. Each is one line on stderr naming it; the
    good one is listed; the exit status is 2, so a script notices."""
    import hallulab.core.config as config

    folder = tmp_path / "results" / "calibration" / "wikibio"
    folder.mkdir(parents=True)
    good = REPO / "results/calibration/wikibio/selfcheck_ngram.ngram_n1_max.json"
    text = good.read_text(encoding="utf-8")
    (folder / good.name).write_text(text, encoding="utf-8")
    (folder / "a_truncated.json").write_text(text[: len(text) // 2], encoding="utf-8")
    content = json.loads(text)
    del content["sha256"], content["heldout"]
    _resealed(folder / "b_no_heldout.json", content)
    (folder / "c_stray.json").write_text("not a calibration\n", encoding="utf-8")
    monkeypatch.setattr(config, "package_checkout", lambda: tmp_path)
    status = cli_main(["calibrations"])
    said = capsys.readouterr()
    assert status == 2
    rows = said.out.splitlines()
    assert rows[0].startswith("data set\t") and len(rows) == 2
    assert rows[1].split("\t")[:4] == ["wikibio", "selfcheck_ngram", "ngram_n1_max", "sentence"]
    assert rows[1].endswith("\tresults/calibration/wikibio/selfcheck_ngram.ngram_n1_max.json")
    errors = said.err.splitlines()
    assert "Traceback" not in said.err and len(errors) == 3
    for line, name, problem in zip(
        errors,
        ("a_truncated.json", "b_no_heldout.json", "c_stray.json"),
        ("not a calibration file", "field 'heldout': missing", "not a calibration file"),
        strict=True,
    ):
        assert line.startswith(f"hallulab calibrations: error: {folder / name}: {problem}")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_calibrate_names_the_line_record_and_field_of_a_score_that_is_no_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    monkeypatch.chdir(tmp_path)
    scores_path, records = _labelled_files(tmp_path)
    scores = pd.read_csv(scores_path).astype({"score": object})
    scores.loc[4, "score"] = "abc"  # record q1's second sentence
    bad = tmp_path / f"bad{suffix}"
    scores.to_csv(bad, index=False) if suffix == ".csv" else scores.to_json(bad, orient="records", lines=True)
    line = 6 if suffix == ".csv" else 5
    assert cli_main(["calibrate", bad.name, "--records", str(records), "-o", "mine.json"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"hallulab calibrate: error: bad{suffix}:{line}: record 'q1', field 'score': 'abc' is not a number\n"
    )
    assert not (tmp_path / "mine.json").exists()


def test_calibrate_reads_records_as_score_does_a_response_label_needs_no_sentences(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records with a response, a response label and no ``sentences``, which `hallulab score`
    takes (it splits the response), are calibrated at the response level. The splitter is
    the score command's (spaCy's, stubbed here: no model is loaded for a unit test)."""
    from hallulab.text.spacy_tokens import SpacyTokenizer

    split: list[str] = []

    def sentences(self: SpacyTokenizer, texts: list[str]) -> list[list[str]]:
        split.extend(texts)
        return [[text] for text in texts]

    monkeypatch.setattr(SpacyTokenizer, "sentences", sentences)
    monkeypatch.chdir(tmp_path)
    scores, records = _labelled_files(tmp_path, level="response", sentences=False)
    assert "sentences" not in records.read_text(encoding="utf-8")
    assert cli_main(["calibrate", scores.name, "--records", records.name, "-o", "mine.json"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("calibration of length length_tokens at the response level -> mine.json\n")
    assert len(split) == 16
    stored = read_calibration(tmp_path / "mine.json")
    assert (stored.method, stored.level) == ("length", "response")


def test_a_damaged_or_missing_packaged_calibration_is_named_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fitted_content: dict[str, dict[str, object]],
) -> None:
    """The committed calibrations as an installed package holds them, read through
    importlib.resources' Traversable (a zip archive's here, as a zipped install gives): a
    damaged one is named by its resource and field, as a file is; a data set without one
    lists the names that have one and points at `hallulab calibrate`."""
    import zipfile

    import hallulab.calibration.own_data as own_data
    import hallulab.calibration.stored as stored
    import hallulab.core.config as config

    content = _edit(fitted_content["isotonic"], "method", "selfcheck_ngram")
    archive = tmp_path / "site.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        packed.writestr(
            "committed/wikibio/selfcheck_ngram.ngram_n1_max.json", sealed_text(_edit(content, "threshold", 5))
        )
        packed.writestr("committed/nq_open/selfcheck_ngram.ngram_n1_max.json", sealed_text(content))
    folder = zipfile.Path(archive, "committed/")
    monkeypatch.setattr(stored, "committed_folder", lambda: folder)
    monkeypatch.setattr(own_data, "committed_folder", lambda: folder)
    monkeypatch.setattr(config, "package_checkout", lambda: None)
    with pytest.raises(CalibrationError) as refused:
        resolve_calibration("wikibio", "selfcheck_ngram")
    assert str(refused.value) == (
        f"{archive}/committed/wikibio/selfcheck_ngram.ngram_n1_max.json: field 'threshold': "
        "5.0 is not a probability in [0, 1]"
    )
    assert resolve_calibration("nq_open", "selfcheck_ngram").threshold == content["threshold"]
    with pytest.raises(CalibrationError) as missing:
        resolve_calibration("concept7", "selfcheck_ngram")
    assert str(missing.value) == (
        "calibration 'concept7': no committed calibration of selfcheck_ngram (ngram_n1_max) on it; the data sets "
        "with one: nq_open, wikibio (hallulab calibrate makes one on your labelled records)"
    )
    assert cli_main(["calibrations"]) == 2
    said = capsys.readouterr()
    assert said.out.splitlines()[1].endswith(f"\t{archive}/committed/nq_open/selfcheck_ngram.ngram_n1_max.json")
    assert said.err.splitlines() == [f"hallulab calibrations: error: {refused.value}"]
    monkeypatch.setattr(stored, "committed_folder", lambda: zipfile.Path(archive, "elsewhere/"))
    with pytest.raises(
        CalibrationError, match=r"no committed calibration in .*site\.zip/elsewhere/; give a calibration"
    ):
        resolve_calibration("wikibio", "selfcheck_ngram")
