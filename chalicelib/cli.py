"""The `crossover` command line: offline screening evaluation, cost reports, DLQ operations."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence, TextIO, get_args

from .defaults import DEFAULT_BEDROCK_MODEL


def screen_jsonl(source: TextIO, sink: TextIO, threshold: float) -> int:
    """One {"text": ...} per input line (and "role": "system" for a system prompt) -> one {"blocked", "reasons",
    "score"} per output line, in order."""
    from .screening import Policy, screen
    from .screening.core import Role

    policy = Policy(block_threshold=threshold, max_chars=10**9)
    bad_lines = 0
    for number, line in enumerate(source, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            text, role = item["text"], item.get("role", "user")
            if not isinstance(text, str):
                raise TypeError("text must be a string")
            if role not in get_args(Role):
                raise ValueError(f"role must be one of {get_args(Role)}")
        except (ValueError, KeyError, TypeError) as exc:
            # Keep output aligned with input: an error line, not a silent skip.
            sink.write(json.dumps({"error": f"line {number}: {exc.__class__.__name__}: {exc}"}) + "\n")
            bad_lines += 1
            continue
        verdict = screen(text, policy, role=role)
        sink.write(json.dumps({"blocked": not verdict.allowed, "reasons": list(verdict.reasons), "score": round(verdict.score, 4)}) + "\n")
    return 1 if bad_lines else 0


def cost_whatif(args: argparse.Namespace) -> int:
    from decimal import Decimal

    from .config import get_settings
    from .meter.catalog import load_catalog
    from dataclasses import replace

    from .meter.planning import FleetConfig, Scenario, analyse

    catalog = load_catalog(args.catalog or get_settings().meter.price_catalog_path)
    overrides = {key: Decimal(str(value)) for key, value in {
        "engineer_usd_per_hour": args.engineer_rate, "setup_hours": args.setup_hours,
        "maintenance_hours_per_month": args.maintenance_hours, "incident_usd_per_month": args.incident_cost,
        "amortisation_months": args.amortisation_months, "headroom": args.headroom}.items() if value is not None}
    scenario = Scenario(
        tokens_per_month=Decimal(str(args.tokens_per_month)), output_share=Decimal(str(args.output_share)),
        bedrock_model=args.bedrock_model, self_hosted_model=args.self_hosted_model, instance=args.instance,
        concurrency=args.concurrency, tokens_per_second=Decimal(str(args.tokens_per_second)) if args.tokens_per_second else None,
        daily_cv=Decimal(str(args.daily_cv)), ops_ready=args.ops_ready, ops_overrides=overrides or None,
        cache_read_share=Decimal(str(args.cache_read_share)), cache_write_share=Decimal(str(args.cache_write_share)),
        fleet=replace(FleetConfig.from_env(), **{k: v for k, v in {
            "min_vcpus": args.min_vcpus, "spot_share": None if args.spot_share is None else Decimal(str(args.spot_share))}.items() if v is not None}),
    )
    try:
        result = analyse(scenario, catalog)
    except ValueError as exc:
        print(json.dumps({"error": str(exc)}), file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2))
    return 0


LOCAL_STACK_DEFAULTS = {  # what `make run` serves (devstack/stack.py): moto on 4566, any credentials
    "AWS_ENDPOINT_URL": "http://127.0.0.1:4566", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
}


class CliError(Exception):
    """A one-line error for the operator (exit status 2), never a traceback."""


def stage_environment(stage: str, chalice_config: str) -> dict[str, str]:
    """The environment a Chalice stage deploys with (.chalice/config.json: global, then the stage's), plus
    the local stack's endpoint and region for `local`. Values already in the environment win."""
    try:
        with open(chalice_config, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read {chalice_config}: {exc.__class__.__name__}") from exc
    stages = config.get("stages", {})
    if stage not in stages:
        raise CliError(f"unknown stage {stage!r}; {chalice_config} has: {', '.join(sorted(stages)) or 'none'}")
    values = {**config.get("environment_variables", {}), **stages[stage].get("environment_variables", {})}
    if stage == "local":
        values = {**LOCAL_STACK_DEFAULTS, **values}
    return {str(k): str(v) for k, v in values.items()}


def apply_stage(stage: str | None, chalice_config: str | None, environ: dict[str, str] | None = None) -> None:
    import os

    if not stage:
        return
    target = os.environ if environ is None else environ
    path = chalice_config or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".chalice", "config.json")
    for name, value in stage_environment(stage, path).items():
        target.setdefault(name, value)


def explain_aws_error(exc: Exception) -> str:
    """What went wrong talking to AWS, in one line that says what to do."""
    from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError, NoRegionError

    from . import aws

    if isinstance(exc, NoRegionError):
        return "no AWS region configured: set AWS_DEFAULT_REGION or a profile region (boto3 does not read AWS_REGION), or use --stage local"
    if isinstance(exc, NoCredentialsError):
        return "no AWS credentials found: configure them the standard way (AWS_PROFILE, env vars, SSO), or use --stage local"
    if isinstance(exc, EndpointConnectionError):
        return f"cannot reach {exc.kwargs.get('endpoint_url', 'the AWS endpoint')}: is the local stack running (make run)?"
    if isinstance(exc, ClientError):
        code = aws.error_code(exc)
        if code == "ResourceNotFoundException":
            return ("a meter table does not exist here: pick the deployment with --stage (local, dev, prod) "
                    "or set LEDGER_TABLE / AGGREGATES_TABLE / DECISIONS_TABLE / BUDGETS_TABLE")
        return f"AWS refused the request: {code}: {exc.response.get('Error', {}).get('Message', '')}"[:300]
    return f"{exc.__class__.__name__}: {exc}"[:300]


def cost_report(args: argparse.Namespace) -> int:
    from .meter.render import render_html, render_json, render_table
    from .meter.service import report_for
    from .services import get_services

    services = get_services()
    show = (lambda message: print(f"\r{message}", end="", file=sys.stderr, flush=True)) if sys.stderr.isatty() or args.progress else None
    report = report_for(services.ledger, services.decisions, services.catalog, args.days, services.settings.meter.ops_ready, progress=show,
                        budgets=services.budgets)
    if show:
        print(file=sys.stderr)
    rendered = {"table": render_table, "json": render_json, "html": render_html}[args.format](report)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(rendered)
    else:
        print(rendered)
    return 0


def dlq_command(args: argparse.Namespace) -> int:
    from .config import get_settings
    from .dlq import list_dead_letters, redrive, source_queues

    settings = get_settings()
    queues = source_queues(settings)
    names = [args.queue] if args.queue else list(queues)
    for name in names:
        if args.dlq_command == "list":
            entries = list_dead_letters(queues[name], settings.events.table, args.limit)
            print(json.dumps({"queue": name, "count": len(entries), "messages": entries}, indent=2))
        else:
            print(json.dumps({"queue": name, **redrive(queues[name])}))
    return 0


def meter_replay(args: argparse.Namespace) -> int:
    from .meter.spill import entries_from_log
    from .services import get_services

    ledger = get_services().ledger
    counts = {"written": 0, "duplicate": 0}
    source = sys.stdin if args.log == "-" else open(args.log, encoding="utf-8")
    with source:
        for entry in entries_from_log(source):
            counts["written" if ledger.record(entry) else "duplicate"] += 1
    print(json.dumps(counts))
    return 0


def routing_command(args: argparse.Namespace) -> int:
    """Show or set a tenant's routing mode (`*`: the default for every tenant), or move modes out of the
    screening policies table (where older versions stored them) into tenant settings."""
    from .services import get_services
    from .tenant_settings import TenantSettings, migrate_routing_modes

    services = get_services()
    router, store = services.router, services.router.tenant_settings
    if args.routing_command == "migrate":
        moved = migrate_routing_modes(services.settings.screening.policies_table, store)
        print(json.dumps({"migrated": moved}))
        return 0
    if args.routing_command == "set":
        store.put(args.tenant, TenantSettings(routing_mode=args.mode).over(store.get(args.tenant)))
    print(json.dumps({"tenant": args.tenant, "stored": store.get(args.tenant).routing_mode,
                      "sync": router.mode_for(args.tenant, "sync"), "job": router.mode_for(args.tenant, "job")}))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="crossover", description="Crossover operations.")
    parser.add_argument("--stage", help="read table names etc. from this Chalice stage in .chalice/config.json "
                                        "(local: the `make run` stack, no setup needed); default: the environment as is")
    parser.add_argument("--chalice-config", help="another .chalice/config.json")
    commands = parser.add_subparsers(dest="command", required=True)
    screen_cmd = commands.add_parser("screen", help="screen prompts offline (local layers)")
    screen_cmd.add_argument("--jsonl", action="store_true", required=True, help="read JSON lines on stdin, write verdicts on stdout")
    screen_cmd.add_argument("--threshold", type=float, default=0.5)
    cost = commands.add_parser("cost", help="cost reports and what-if planning").add_subparsers(dest="cost_command", required=True)
    whatif = cost.add_parser("whatif", help="Bedrock vs self-hosted for a traffic profile (defaults from the price catalog)")
    whatif.add_argument("--tokens-per-month", type=float, required=True)
    whatif.add_argument("--output-share", type=float, default=0.25, help="fraction of tokens that are output tokens")
    whatif.add_argument("--bedrock-model", default=DEFAULT_BEDROCK_MODEL)
    whatif.add_argument("--self-hosted-model", help="default: the catalog's equivalent-quality pair of the Bedrock model")
    whatif.add_argument("--instance", help="default: the self-hosted model's instance in the catalog (EC2, as Batch runs it)")
    whatif.add_argument("--cache-read-share", type=float, default=0.0, help="fraction of tokens that are cache reads")
    whatif.add_argument("--cache-write-share", type=float, default=0.0, help="fraction of tokens that are 5-minute cache writes")
    whatif.add_argument("--min-vcpus", type=int, help="Batch MinvCpus of the GPU fleet (default: catalog / GPU_MIN_VCPUS)")
    whatif.add_argument("--spot-share", type=float, help="share of GPU hours on spot (default: catalog / GPU_SPOT_SHARE)")
    whatif.add_argument("--concurrency", type=int, help="which measured concurrency to use (default: the highest)")
    whatif.add_argument("--tokens-per-second", type=float, help="override the catalog's measured throughput")
    whatif.add_argument("--daily-cv", type=float, default=0.2, help="traffic variability: stdev/mean of daily tokens")
    whatif.add_argument("--ops-ready", action=argparse.BooleanOptionalAction, default=True)
    whatif.add_argument("--engineer-rate", type=float)
    whatif.add_argument("--setup-hours", type=float)
    whatif.add_argument("--maintenance-hours", type=float)
    whatif.add_argument("--incident-cost", type=float)
    whatif.add_argument("--amortisation-months", type=float)
    whatif.add_argument("--headroom", type=float)
    whatif.add_argument("--catalog", help="another price catalog file")
    report = cost.add_parser("report", help="spend, projection and recommendation from the meter")
    report.add_argument("--days", type=int, default=30)
    report.add_argument("--format", choices=["table", "json", "html"], default="table")
    report.add_argument("--output", help="write to a file instead of stdout")
    report.add_argument("--progress", action="store_true", help="show read progress even when stderr is not a terminal")
    dlq = commands.add_parser("dlq", help="dead-letter queues: list what failed and why, redrive after a fix")
    dlq.add_argument("dlq_command", choices=["list", "redrive"])
    dlq.add_argument("--queue", choices=["requests", "requests-fifo", "object-events", "job-steps", "meter-spill"], help="default: all")
    dlq.add_argument("--limit", type=int, default=100)
    meter = commands.add_parser("meter", help="the ledger's last-resort replay").add_subparsers(dest="meter_command", required=True)
    replay = meter.add_parser("replay", help="write `meter.record_failed` entries from a JSON log export back into the ledger")
    replay.add_argument("--log", required=True, help="log file (JSON lines, e.g. a CloudWatch Logs export); '-' for stdin")
    routing = commands.add_parser("routing", help="per-tenant routing mode (bedrock, self_hosted, auto)")
    routing_commands = routing.add_subparsers(dest="routing_command", required=True)
    show = routing_commands.add_parser("show", help="the stored and the effective mode for sync calls and jobs")
    show.add_argument("--tenant", default="*", help="default: '*', the account-wide default")
    set_mode = routing_commands.add_parser("set", help="store a routing mode")
    set_mode.add_argument("mode", choices=["bedrock", "self_hosted", "auto"])
    set_mode.add_argument("--tenant", default="*", help="default: '*', the account-wide default")
    routing_commands.add_parser("migrate", help="copy routing modes from the screening policies table (older versions) "
                                                "into tenant settings; run it before deploying this version")
    args = parser.parse_args(argv)
    try:
        apply_stage(args.stage, args.chalice_config)
        return _dispatch(parser, args)
    except CliError as exc:
        print(f"crossover: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # AWS configuration and access problems: one line, never a traceback
        from botocore.exceptions import BotoCoreError, ClientError

        if not isinstance(exc, (BotoCoreError, ClientError)):
            raise
        print(f"crossover: error: {explain_aws_error(exc)}", file=sys.stderr)
        return 2


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "meter":
        return meter_replay(args)
    if args.command == "routing":
        return routing_command(args)
    if args.command == "dlq":
        return dlq_command(args)
    if args.command == "screen":
        return screen_jsonl(sys.stdin, sys.stdout, args.threshold)
    if args.command == "cost":
        return cost_whatif(args) if args.cost_command == "whatif" else cost_report(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
