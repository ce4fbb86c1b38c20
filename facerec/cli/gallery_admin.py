"""`facerec export | import | db | health | stats | reindex | api-key`: looking after a gallery as a whole."""

from __future__ import annotations

import argparse

from facerec.cli.output import emit, open_gallery, settings_from
from facerec.cli.registry import CommandAdder
from facerec.words.phrasing import plural, score_text, size_text
from facerec.words.health import (confusable_pairs_line, health_in_words, on_cosines, pair_text,
                                  threshold_words)
from facerec.words.sightings import sightings_in_words
from facerec.words.threshold import with_sentence


def register(command: CommandAdder, sub, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the `facerec` parser."""
    p = command("export", cmd_export, "export the gallery to a portable zip file")
    p.add_argument("path")
    p.add_argument("--no-crops", action="store_true", help="embeddings and names only")
    p = command("import", cmd_import, "import a gallery zip file")
    p.add_argument("path")
    p = command("db", cmd_db, "the gallery database's schema: `facerec db upgrade` creates or upgrades it (run "
                "once before the first start on PostgreSQL, and after upgrading facerec)")
    p.add_argument("action", choices=["upgrade"])
    command("health", cmd_health, "embedding metrics, sightings, weak enrollments and confusable pairs of the gallery")
    keys = sub.add_parser("api-key", help="create, list and revoke the REST API's keys",
                          description="Keys for the app's REST API (/api/v1), stored hashed in the gallery database; "
                                      "with none created the REST API is off. See docs/api.md.")
    key_commands = keys.add_subparsers(metavar="ACTION")
    keys.set_defaults(handler=lambda _args: keys.print_help() or 2)

    def key_command(name: str, handler, help_text: str) -> argparse.ArgumentParser:
        p = key_commands.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        p.add_argument("--json", action="store_const", const="-", help="print JSON instead of a table")
        return p

    p = key_command("create", cmd_api_key_create, "create a key; it is printed once, only its hash is stored")
    p.add_argument("--role", required=True, choices=["read", "admin"],
                   help="read: identify, verify, list and get people; admin: everything, writes included")
    p.add_argument("--name", help="a label saying who or what the key is for (default: '<role> key')")
    key_command("list", cmd_api_key_list, "list the keys (never the keys themselves: their first characters)")
    p = key_command("revoke", cmd_api_key_revoke, "revoke a key: refused from the next request on")
    p.add_argument("id", type=int, help="the key's id, from `facerec api-key list`")
    command("stats", cmd_stats, "counts, model and index of the gallery")
    p = command("reindex", cmd_reindex, "re-embed every face from its stored crop with the current model pack (after "
                "choosing another with --pack or FACEREC_PACK); says first what it will cost")
    p.add_argument("--estimate", action="store_true", help="only say what it would cost (faces, time on this CPU)")


def cmd_export(args) -> int:
    with open_gallery(args) as gallery:
        count = gallery.export(args.path, include_crops=not args.no_crops)
    emit(args, {"path": args.path, "faces": count}, text=f"exported {count} face(s) to {args.path}")
    return 0


def cmd_import(args) -> int:
    with open_gallery(args) as gallery:
        counts = gallery.import_(args.path)
    emit(args, counts, text=f"imported {counts['added']} face(s), skipped {counts['skipped']} already present")
    return 0


def cmd_stats(args) -> int:
    with open_gallery(args) as gallery:
        stats = gallery.services().maintenance.stats()
        rule = gallery.services().thresholds.in_force(with_people=True)
    stats["threshold_policy"] = with_sentence(stats["threshold_policy"], rule)
    rows = [[k, v] for k, v in stats.items() if k not in ("threshold_policy", "embedder", "index_memory")]
    embedder, memory = stats["embedder"], stats["index_memory"]
    rows.append(["embedder", f"{embedder['path']}: {embedder['reason']}"])
    if memory:  # a server's index (pgvector): its size against the page cache that should hold it
        held = f"{size_text(memory['index_bytes'])} index, {size_text(memory['shared_buffers_bytes'])} shared_buffers"
        rows.append(["index memory", held])
    emit(args, stats, rows, ["key", "value"], text=stats["threshold_policy"]["sentence"])
    return 0


def cmd_health(args) -> int:
    with open_gallery(args) as gallery:
        report = health_in_words(gallery.health())
        rule = gallery.services().thresholds.in_force(with_people=True)
    report["threshold_policy"] = with_sentence(report["threshold_policy"], rule)
    rows = [["ClosestIsPositiveAccuracy", report["closest_is_positive_accuracy"],
             report["readings"]["closest_is_positive_accuracy"]]]
    rows += [[k, v, report["readings"][k]] for k, v in report["median_distances"].items()]
    rows.append(["Nearest other person", report["nearest_other_person"], report["readings"]["NearestOtherPerson"]])
    text = (f"{plural(report['identities'], 'person', 'people')}, {plural(report['faces'], 'face')}, "
            f"{threshold_words(report['score_threshold'], report['threshold'])}{_cosine_of(report)}\n"
            f"{report['threshold_policy']['sentence']}\n"
            "as the gallery grows: " + ", ".join(f"{plural(g['faces'], 'face')} -> {score_text(g['threshold'])}"
                                                  for g in report["policy_growth"][::6]))
    text += "".join(f"\n{note}" for note in report["notes"])
    if report["readings"].get("search_index"):
        text += f"\n{report['readings']['search_index']}"
    text += _sightings_text(report["sightings"])
    if report["suspected_duplicates"]:
        text += "\nsuspected duplicates: " + "; ".join(pair_text(p) for p in report["suspected_duplicates"][:10])
    if report["confusable_pairs"]:
        text += "\n" + confusable_pairs_line(report["confusable_pairs"], report["threshold"])
    emit(args, report, [[r[0], "undefined" if r[1] is None else r[1], r[2]] for r in rows],
          ["metric", "value", "reading"], text=text)
    return 0


def _cosine_of(report: dict) -> str:
    """Where the gallery decides on a normalised score, that the pairs printed below are on the cosine scale of
    the similarity `threshold_words` names beside the score threshold."""
    return "" if on_cosines(report["score_threshold"], report["threshold"]) else (
        ": the pairs below are cosine similarities too")


_TREND_UNITS = {"day": "per day", "sightings": "per block of sightings"}


def _sightings_text(sightings: dict) -> str:
    """The health report's sightings part, for the terminal: the sentences the Health tab shows
    (`sightings_in_words`), with the trend's figures and the weak enrollments named."""
    words = sightings_in_words(sightings)
    text = f"\nsightings: {words.basis}"
    if words.trend:
        text += (f"\ntrend ({_TREND_UNITS.get(sightings['trend_unit'], '')}, MedianClosestPositiveDistance): "
                 + ", ".join(f"{t['window']}: {t['MedianClosestPositiveDistance']}" for t in sightings["trend"])
                 + f"\n{words.trend}")
    weak = sightings.get("weak_enrollments") or []
    if words.weak:
        text += f"\n{words.weak}" + ("".join(
            f"\n  {w['name']} (median {w['median_similarity']:.3f} over {w['sightings']})" for w in weak[:20]))
    return text


def cmd_db(args) -> int:
    from facerec.storage import upgrade
    from facerec.storage.backends.kinds import database_kind
    from facerec.storage.store import display_url
    from facerec.vectors.pgvector.projection import model_projection

    settings = settings_from(args)
    url = settings.resolved_database_url
    done = upgrade(url, model_projection(settings) if database_kind(url) == "postgresql" else None)
    emit(args, {"database": display_url(url), "done": done},
          text=f"{display_url(url)}: " + ("; ".join(done) if done else "the schema is up to date"))
    return 0


def cmd_reindex(args) -> int:
    with open_gallery(args) as gallery:
        maintenance = gallery.services().maintenance
        cost = maintenance.reindex_cost()
        estimate = (f"{cost['faces']:,} face(s) to re-embed with {cost['model_id']}: about {cost['seconds']:,.0f} s "
                    f"({cost['ms_per_face']} ms a face, measured now on this machine)")
        if args.estimate:
            emit(args, {"estimate": cost}, text=estimate)
            return 0
        if args.json != "-":
            print(estimate, flush=True)
        count = maintenance.reindex()
    emit(args, {"estimate": cost, "reindexed": count}, text=f"re-embedded {count} face(s)")
    return 0


def cmd_api_key_create(args) -> int:
    with open_gallery(args) as gallery:
        record, key = gallery.services().keys.create(args.role, args.name)
    emit(args, {**record.to_dict(), "key": key},
          text=f"created API key {record.id} ({record.role}, '{record.name}'). It is shown only now; send it as "
               f"the X-API-Key header:\n{key}")
    return 0


def cmd_api_key_list(args) -> int:
    with open_gallery(args) as gallery:
        records = gallery.services().keys.list()
    rows = [[r.id, r.name, r.role, f"{r.shown}...", r.created_at.strftime("%Y-%m-%d %H:%M"),
             r.revoked_at.strftime("%Y-%m-%d %H:%M") if r.revoked_at else ""] for r in records]
    active = sum(r.active for r in records)
    emit(args, [r.to_dict() for r in records], rows, ["id", "name", "role", "key", "created (UTC)", "revoked (UTC)"],
          text=f"{active} active key(s)" + ("" if active else "; the REST API is off until one is created"))
    return 0


def cmd_api_key_revoke(args) -> int:
    with open_gallery(args) as gallery:
        record = gallery.services().keys.revoke(args.id)
    emit(args, record.to_dict(), text=f"API key {record.id} ('{record.name}') is revoked")
    return 0
