"""Photo libraries (#66): a library's unknown faces grouped in one pass, and a large library killed and resumed."""

from __future__ import annotations

from result_blocks.common import cpu_text, load, model_text


def library_grouping_block() -> str:
    result = load("library_grouping")
    if not result:
        return ("(not measured yet: `python benchmarks/library_grouping.py --data ../shared/data --out "
                "benchmarks/results/library_grouping.json`)")
    g, big = result["grouping"], result["big_library"]
    rows = ["| | measured | the issue asks |", "|---|---|---|",
            f"| groups shown that are one person | {g['groups_one_person']} of {g['groups_shown']} "
            f"({g['share_one_person']:.1%}) | at least 95% |",
            f"| strangers with 3+ photos who get a group | {g['strangers_with_a_group']} of "
            f"{g['strangers_with_3_photos']} ({g['share_strangers_with_a_group']:.0%}) | at least 80% |",
            f"| enrolled people's faces in a group shown | {g['enrolled_faces_in_shown_groups']} | none |",
            f"| time and memory | {g['seconds_per_1000_photos']:.0f} s per 1,000 photos, peak {g['peak_resident_mb']} MB "
            f"({g['library_photos']:,} photos in {g['seconds']:.0f} s, {result['cores']} cores) | stated |"]
    control = g.get("with_the_suggestions_cohort_test")
    if control:
        rows.append(f"| the same faces grouped with the suggestions' cohort test too (the control) | "
                    f"{control['groups_one_person']} of {control['groups_shown']} groups one person; "
                    f"{control['strangers_with_a_group']} of {g['strangers_with_3_photos']} strangers with a group | – |")
    text = ("\n".join(rows) + f"\n\n{g['people']} held-out people, {g['enrolled']} of them enrolled from one photo; the "
            f"library: every other photo of all of them ({g['library_photos']:,}); {g['faces_grouped']:,} faces nobody "
            f"enrolled matched were grouped; {g['groups_resembling_an_enrolled_person']} groups were marked as an "
            "enrolled person's missed photos and not shown. A group shown: faces from 2 photos or more.")
    text += (f"\n\nA library of {big['photos']:,} photos, `--group`, killed after {big['killed_after_seconds']:.0f} s "
             f"({big['answered_before_the_kill']:,} photos answered by then) and run again to the end: the second run "
             f"found {big['second_run_found_done']:,} done, {big['answers_kept']:,} answers kept for "
             f"{big['distinct_photos_answered']:,} photos (each once); {big['first_run_seconds']:.0f} s + "
             f"{big['second_run_seconds']:.0f} s, {big['photos_per_second']:.1f} photos a second, peak "
             f"{big['peak_resident_mb']} MB; {big['groups_shown']:,} groups shown.")
    return text + f" Measured on: {cpu_text(result)}, model {model_text(result)}, {result['provenance']['date'][:10]}."
