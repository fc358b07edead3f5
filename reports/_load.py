"""Read a result folder into the two record tables of :mod:`reports._schema`.

A result folder is what ``harness run --out DIR`` (or ``pytest --harness-results
DIR``) writes: ``manifest.json``, ``cases*.parquet`` / ``cases*.jsonl`` and
``attempts*.parquet`` / ``attempts*.jsonl`` (one file per xdist worker when
suffixed). Parquet is read when present, JSON lines otherwise. Columns are
renamed through the one mapping in ``_schema``; a column the runner does not
write loads as null ("not reported"), never as 0.

Example::

    results = load_results(Path("results/candidate"))
    results.attempts.select(COST_USD).sum()
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from fakes import PRICES, ModelPrice, price_of
from harness import HarnessError, ReportError
from harness.frontend import read_input, unfinished_run
from reports import _schema as s

#: The result-folder format this reader understands (harness/_output.py FORMAT_VERSION).
SUPPORTED_FORMAT_VERSIONS: tuple[int, ...] = (1,)
#: The largest table file read (a run of 5,000 cases writes a few megabytes).
MAX_TABLE_BYTES = 1024 * 1024 * 1024
#: The largest manifest read (it names the files and the run's settings: kilobytes).
MAX_MANIFEST_BYTES = 16 * 1024 * 1024

_RUNNER_HINT = ("expected a folder written by 'harness run --out DIR' or "
                "'pytest --harness-results DIR'")
# Model families whose provider we know; the runner does not record the provider yet.
_PROVIDER_OF_FAMILY: tuple[tuple[str, str], ...] = (
    ("fake-gpt", "openai"), ("gpt-", "openai"), ("fake-sonnet", "anthropic"),
    ("fake-opus", "anthropic"), ("fake-haiku", "anthropic"), ("claude-", "anthropic"),
    ("fake-flash", "gemini"), ("fake-gemini", "gemini"), ("gemini-", "gemini"),
)


@dataclass(frozen=True)
class ResultSet:
    """One release's results: the manifest, one row per run, one row per attempt.

    ``unpriced_models`` lists models the price table does not know; their cost is null.
    """

    release: str
    path: Path
    manifest: Mapping[str, Any]
    runs: pl.DataFrame
    attempts: pl.DataFrame
    source_format: str
    unpriced_models: tuple[str, ...] = field(default=())


def load_results(folder: Path, release: str | None = None,
                 prices: Mapping[str, ModelPrice] = PRICES) -> ResultSet:
    """Load ``folder`` as one release (named ``release``, else the manifest's, else the folder's).

    Raises :class:`ReportError` for a missing or empty folder, an unsupported
    format version or missing columns.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ReportError(f"{folder}: no such result folder; {_RUNNER_HINT}", str(folder))
    manifest = _read_manifest(folder)
    name = release or str(manifest.get("release") or folder.name)
    _refuse_unfinished(folder, manifest)
    check_manifest_files(folder, manifest)
    raw_runs, fmt = _read_table(folder, "cases")
    raw_attempts, _ = _read_table(folder, "attempts")
    if raw_runs.height == 0:
        raise ReportError(f"{folder}: empty run: no cases were recorded; run at least one "
                          "scenario before comparing", str(folder))
    _require(folder, "cases", raw_runs, ("scenario", "case_id", "seed", "passed"))
    _require(folder, "attempts", raw_attempts, ("case_id", "model") if raw_attempts.width else ())
    try:
        attempts, unpriced = attempt_table(raw_attempts, name, prices)
        runs = run_table(raw_runs, attempts, name)
    except pl.exceptions.PolarsError as error:
        raise ReportError(f"{folder}: a column holds values of the wrong type ({error}); "
                          f"{_RUNNER_HINT}", str(folder)) from error
    _refuse_duplicates(folder, runs)
    return ResultSet(name, folder, manifest, runs, attempts, fmt, unpriced)


def _refuse_unfinished(folder: Path, manifest: Mapping[str, Any]) -> None:
    """A folder whose run was interrupted is incomplete, whatever files it holds.

    ``harness run`` keeps a journal until its files and manifest are written; a
    journal beside a whole manifest is one a kill left just before removing it.
    """
    unfinished = unfinished_run(folder)
    if unfinished is None or (manifest.get("files") and _files_match(folder, manifest)):
        return
    raise ReportError(f"{folder}: {unfinished.message}", str(folder))


def _files_match(folder: Path, manifest: Mapping[str, Any]) -> bool:
    try:
        check_manifest_files(folder, manifest)
    except ReportError:
        return False
    return True


def _read_manifest(folder: Path) -> Mapping[str, Any]:
    path = folder / "manifest.json"
    if not path.exists():
        # The pytest plugin writes no manifest yet; the tables still stand on their own.
        return {}
    try:
        manifest = json.loads(read_input(path, MAX_MANIFEST_BYTES).decode("utf-8"))
    except (OSError, ValueError) as error:
        raise ReportError(f"{path}: not a readable JSON manifest ({error})", str(path)) from error
    if not isinstance(manifest, dict):
        raise ReportError(f"{path}: expected a JSON object, got {type(manifest).__name__}",
                          str(path))
    version = manifest.get("format_version")
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise ReportError(
            f"{path}: result format version {version!r} is not supported; expected one of "
            f"{list(SUPPORTED_FORMAT_VERSIONS)}. Re-run that release's suite with this harness "
            "version to get a comparable folder", str(path))
    return manifest


def _read_table(folder: Path, stem: str) -> tuple[pl.DataFrame, str]:
    """Every ``stem*.parquet`` (else ``stem*.jsonl``) in ``folder``, stacked."""
    for suffix, reader in ((".parquet", _read_parquet), (".jsonl", _read_jsonl)):
        paths = _one_source(folder, sorted(folder.glob(f"{stem}*{suffix}")))
        if paths:
            try:
                frames = [reader(path) for path in paths]
            except (OSError, pl.exceptions.PolarsError) as error:
                raise ReportError(f"{folder}: cannot read {stem}{suffix}: {error}",
                                  str(folder)) from error
            return pl.concat(frames, how="diagonal_relaxed"), suffix[1:]
    raise ReportError(f"{folder}: no {stem}.parquet or {stem}.jsonl; {_RUNNER_HINT}",
                      str(folder))


def _one_source(folder: Path, paths: list[Path]) -> list[Path]:
    """``paths`` when they come from one writer: ``harness run`` (no suffix) or pytest workers.

    Both in one folder would count every case twice.
    """
    whole = [path for path in paths if path.stem in {"cases", "attempts"}]
    if whole and len(whole) < len(paths):
        names = ", ".join(path.name for path in paths)
        raise ReportError(
            f"{folder}: two sources of runs ({names}): 'harness run' wrote the unsuffixed file "
            "and pytest workers the suffixed ones; keep one source per folder (delete the "
            "other files, or give each run its own --out / --harness-results folder)",
            str(folder))
    return paths


def _read_parquet(path: Path) -> pl.DataFrame:
    return pl.read_parquet(io.BytesIO(read_input(path, MAX_TABLE_BYTES)))


def _read_jsonl(path: Path) -> pl.DataFrame:
    rows = [row for number, line in enumerate(_lines(path), start=1)
            if (row := _json_row(path, number, line)) is not None]
    # infer_schema_length=None: a column that is null in the first rows keeps its type.
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


def _lines(path: Path) -> list[bytes]:
    try:
        return read_input(path, MAX_TABLE_BYTES).splitlines()
    except OSError as error:
        raise ReportError(f"{path}: cannot read: {error.strerror}", str(path)) from error


def _json_row(path: Path, number: int, line: bytes) -> dict[str, Any] | None:
    """Line ``number`` of a JSON lines file as an object; None for a blank line."""
    where = f"{path}:{number}"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReportError(f"{where}: not UTF-8 (byte {error.start + 1}); expected one JSON "
                          f"object per line; {_REWRITE_HINT}", str(path)) from error
    if not text.strip():
        return None
    try:
        row = json.loads(text)
    except ValueError as error:
        raise ReportError(f"{where}: not a JSON object ({error}; the line is truncated or "
                          f"edited); {_REWRITE_HINT}", str(path)) from error
    if not isinstance(row, dict):
        raise ReportError(f"{where}: expected a JSON object, got {type(row).__name__}; "
                          f"{_REWRITE_HINT}", str(path))
    _check_types(where, path, row)
    return row


_REWRITE_HINT = "re-run the suite to rewrite the folder"
# The JSON type each runner column must have (null is always allowed: "not reported").
_JSON_TYPES: dict[type[pl.DataType], tuple[type, ...]] = {
    pl.String: (str,), pl.Int64: (int,), pl.Float64: (int, float), pl.Boolean: (bool,),
    pl.List: (list,),
}


def _runner_types() -> dict[str, tuple[type, ...]]:
    expected: dict[str, tuple[type, ...]] = {}
    for mapping, schema in ((s.RUN_FROM_RUNNER, s.RUN_SCHEMA),
                            (s.ATTEMPT_FROM_RUNNER, s.ATTEMPT_SCHEMA)):
        for ours, runner in mapping.items():
            expected[runner] = _JSON_TYPES[schema[ours].base_type()]
    return expected


_RUNNER_TYPES = _runner_types()


def _check_types(where: str, path: Path, row: Mapping[str, Any]) -> None:
    for key, value in row.items():
        allowed = _RUNNER_TYPES.get(key)
        if allowed is None or value is None:
            continue
        # bool is an int in Python, but true is not a count.
        if (isinstance(value, bool) and bool not in allowed) or not isinstance(value, allowed):
            names = " or ".join(t.__name__ for t in allowed)
            raise ReportError(f"{where}: {key!r} is {value!r} ({type(value).__name__}); "
                              f"expected {names} or null; {_REWRITE_HINT}", str(path))


def _refuse_duplicates(folder: Path, runs: pl.DataFrame) -> None:
    """One row per run key: a repeated case would weigh twice in every metric."""
    repeated = runs.filter(pl.struct(s.PAIR_KEY).is_duplicated())
    if repeated.height:
        ids = sorted(set(repeated[s.CASE_ID].to_list()))
        raise ReportError(
            f"{folder}: {repeated.height} rows repeat a run (scenario, seed, crash label): "
            f"{', '.join(ids[:5])}{' and more' if len(ids) > 5 else ''}; expected one row per "
            "run; results of two runs were written to one folder, re-run into an empty one",
            str(folder))


def check_manifest_files(folder: Path, manifest: Mapping[str, Any]) -> None:
    """Every file the manifest lists is present and has the SHA-256 the runner recorded.

    A file edited, truncated or deleted after the run is refused rather than
    read (or, with both formats present, silently ignored).
    """
    files = manifest.get("files") or {}
    if not isinstance(files, dict):
        raise ReportError(f"{folder / 'manifest.json'}: 'files' is not an object; "
                          f"{_REWRITE_HINT}", str(folder))
    for name, digest in sorted(files.items()):
        path = folder / str(name)
        if not path.exists():  # anything else there is refused as read: a pipe is no table
            raise ReportError(f"{path}: missing; the manifest lists it. {_REWRITE_HINT}",
                              str(path))
        try:
            changed = _sha256(path) != digest
        except OSError as error:
            raise ReportError(f"{path}: cannot read: {error.strerror}", str(path)) from error
        if changed:
            raise ReportError(f"{path}: changed since the run wrote it (its SHA-256 no longer "
                              "matches manifest.json); results must not be edited by hand: "
                              f"{_REWRITE_HINT}", str(path))


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(read_input(path, MAX_TABLE_BYTES)).hexdigest()


def _require(folder: Path, stem: str, frame: pl.DataFrame, columns: tuple[str, ...]) -> None:
    missing = [name for name in columns if name not in frame.columns]
    if missing:
        raise ReportError(f"{folder}: {stem} lacks column(s) {', '.join(missing)}; "
                          f"{_RUNNER_HINT}", str(folder))


def _mapped(frame: pl.DataFrame, mapping: Mapping[str, str], schema: pl.Schema) -> list[pl.Expr]:
    """Our columns taken from the runner's, cast to our types; null where the runner has none."""
    return [
        (pl.col(runner) if runner in frame.columns else pl.lit(None)).cast(schema[ours]).alias(ours)
        for ours, runner in mapping.items()
    ]


def attempt_table(raw: pl.DataFrame, release: str, prices: Mapping[str, ModelPrice] = PRICES
                  ) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """The runner's attempt rows in :data:`~reports._schema.ATTEMPT_SCHEMA`, priced.

    >>> raw = pl.DataFrame({"scenario": ["s"], "case_id": ["s"], "seed": [1],
    ...     "request_index": [0], "turn": [1], "attempt": [1], "model": ["fake-gpt"],
    ...     "started_at": [0.0], "first_byte_at": [0.5], "ended_at": [1.0],
    ...     "outcome": ["ok"], "input_tokens": [1000], "cache_read_tokens": [0],
    ...     "cache_write_tokens": [0], "output_tokens": [0]})
    >>> attempt_table(raw, "r")[0]["harness.cost_usd"].to_list()
    [0.002]
    """
    if raw.width == 0:
        return pl.DataFrame(schema=s.ATTEMPT_SCHEMA), ()
    frame = raw.select(*_mapped(raw, s.ATTEMPT_FROM_RUNNER, s.ATTEMPT_SCHEMA),
                       _ttft(raw).alias(s.TTFT))
    frame = frame.with_columns(
        pl.lit(release, pl.String).alias(s.RELEASE),
        _crash_label_of_case_id().alias(s.CRASH_LABEL),
        pl.coalesce(s.ATTEMPT_ID, pl.format("{}#{}.{}", s.CASE_ID, s.REQUEST_INDEX, s.ATTEMPT))
        .alias(s.ATTEMPT_ID),
        pl.coalesce(s.PROVIDER, _provider_of(pl.col(s.MODEL))).alias(s.PROVIDER),
        pl.coalesce(s.CACHE_WRITE_5M, pl.col(s.CACHE_CREATION)
                    - pl.col(s.CACHE_WRITE_1H).fill_null(0)).alias(s.CACHE_WRITE_5M),
        (pl.col(s.INPUT_TOKENS) - pl.col(s.CACHE_READ) - pl.col(s.CACHE_CREATION))
        .alias(s.UNCACHED_INPUT),
    )
    frame, unpriced = _priced(frame, prices)
    return frame.select(s.ATTEMPT_SCHEMA.names()), unpriced


def _ttft(raw: pl.DataFrame) -> pl.Expr:
    if "first_byte_at" not in raw.columns or "started_at" not in raw.columns:
        return pl.lit(None, pl.Float64)
    return (pl.col("first_byte_at") - pl.col("started_at")).cast(pl.Float64)


def _crash_label_of_case_id() -> pl.Expr:
    # Case.case_id is "name" or "name[label]" (harness/runner/_results.py).
    return pl.col(s.CASE_ID).str.extract(r"\[(.*)\]$", 1)


def _provider_of(model: pl.Expr) -> pl.Expr:
    expr: pl.Expr = pl.lit(None, pl.String)
    for prefix, provider in reversed(_PROVIDER_OF_FAMILY):
        expr = pl.when(model.str.starts_with(prefix)).then(pl.lit(provider)).otherwise(expr)
    return expr


_BUCKET_PRICES = ("uncached_input", "cache_read", "cache_write_5m", "cache_write_1h", "output")


def _price_frame(models: list[str], prices: Mapping[str, ModelPrice]
                 ) -> tuple[pl.DataFrame, tuple[str, ...]]:
    rows: list[dict[str, Any]] = []
    unpriced: list[str] = []
    for model in models:
        try:
            price = price_of(model, prices)
        except HarnessError:
            unpriced.append(model)
            continue
        rows.append({s.MODEL: model} | {f"_p_{name}": float(getattr(price, name))
                                        for name in _BUCKET_PRICES})
    schema = {s.MODEL: pl.String} | {f"_p_{name}": pl.Float64 for name in _BUCKET_PRICES}
    return pl.DataFrame(rows, schema=schema), tuple(unpriced)


def _priced(frame: pl.DataFrame, prices: Mapping[str, ModelPrice]
            ) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """Add the cost column: tokens per bucket x the dated per-bucket price, summed."""
    models = sorted(m for m in frame[s.MODEL].unique().to_list() if m is not None)
    table, unpriced = _price_frame(models, prices)
    # A request that reports no cache fields is billed as if all input were uncached.
    uncached = pl.coalesce(s.UNCACHED_INPUT, s.INPUT_TOKENS)
    tokens = (uncached, pl.col(s.CACHE_READ), pl.col(s.CACHE_WRITE_5M), pl.col(s.CACHE_WRITE_1H),
              pl.col(s.OUTPUT_TOKENS))
    dollars = pl.sum_horizontal([t.fill_null(0) * pl.col(f"_p_{name}")
                                 for t, name in zip(tokens, _BUCKET_PRICES, strict=True)])
    joined = frame.join(table, on=s.MODEL, how="left", maintain_order="left")
    # sum_horizontal skips nulls; an unpriced model must stay null, not cost 0.
    priced = pl.when(pl.col("_p_output").is_null()).then(None).otherwise(dollars / 1_000_000)
    return joined.with_columns(priced.alias(s.COST_USD)), unpriced


def run_table(raw: pl.DataFrame, attempts: pl.DataFrame, release: str) -> pl.DataFrame:
    """The runner's case rows in :data:`~reports._schema.RUN_SCHEMA`, with attempt totals."""
    frame = raw.select(*_mapped(raw, s.RUN_FROM_RUNNER, s.RUN_SCHEMA),
                       _crash_label(raw).alias(s.CRASH_LABEL))
    per_case = attempts.group_by(s.CASE_ID, s.SEED).agg(
        pl.len().cast(pl.Int64).alias(s.ATTEMPTS),
        # min_count=1 semantics: a run whose every attempt is unpriced has a null cost.
        pl.when(pl.col(s.COST_USD).is_not_null().any())
        .then(pl.col(s.COST_USD).sum()).alias(s.COST_USD),
    )
    frame = frame.join(per_case, on=[s.CASE_ID, s.SEED], how="left", maintain_order="left")
    return frame.with_columns(
        pl.lit(release, pl.String).alias(s.RELEASE),
        pl.col(s.SKIPPED).fill_null(value=False),
        pl.col(s.ATTEMPTS).fill_null(0),
        # A run without attempts cost nothing; one whose attempts are unpriced stays null.
        pl.when(pl.col(s.ATTEMPTS).is_null()).then(0.0).otherwise(pl.col(s.COST_USD))
        .alias(s.COST_USD),
    ).select(s.RUN_SCHEMA.names())


def _crash_label(raw: pl.DataFrame) -> pl.Expr:
    """``point:when:class[:again]`` as ``CrashSpec.label``; null for an uncrashed run."""
    if "crash_point" not in raw.columns:
        return _crash_label_of_case_id()
    again = pl.when(pl.col("crash_during_recovery").fill_null(value=False)).then(pl.lit(":again"))
    label = pl.concat_str([pl.col("crash_point"), pl.col("crash_when"), pl.col("crash_class")],
                          separator=":") + again.otherwise(pl.lit(""))
    return pl.when(pl.col("crash_point").is_null()).then(None).otherwise(label).cast(pl.String)
