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


def library_missed_groups_block() -> str:
    result = load("library_missed_groups")
    if not result:
        return ("(not measured yet: `python benchmarks/library_missed_groups.py --data ../shared/data --out "
                "benchmarks/results/library_missed_groups.json`)")
    rows = [f"| groups also marked: pooled score at least | enrolled people's groups marked (of "
            f"{result['enrolled_groups']}) | their faces left in a group shown | strangers' groups hidden (of "
            f"{result['strangers_groups']}) | strangers with 3+ photos who keep a group (of "
            f"{result['strangers_with_3_photos']}) |", "|---|---|---|---|---|",
            f"| none (shipped) | 0 | {result['enrolled_faces']} | 0 | {result['strangers_keeping_a_group_uncut']} |"]
    rows += [f"| {cut['cut']:.1f} | {cut['enrolled_groups_marked']} | {cut['enrolled_faces_left']} | "
             f"{cut['strangers_groups_hidden']} | {cut['strangers_keeping_a_group']} |" for cut in result["cuts"]]
    scores = result["enrolled_groups_pooled_scores"]
    text = (f"The {result['enrolled_faces']} faces are {result['enrolled_groups']} groups, each mostly one enrolled "
            f"person's photos that identify missed. Pooled as a track is and searched, "
            f"{result['enrolled_groups'] - result['enrolled_groups_nearest_their_own_person']} of them have another "
            f"enrolled person as their best candidate, not their own; their pooled scores run from {scores[0]:.2f} "
            f"down to {scores[-1]:.2f}, while the best of the {result['strangers_groups']} strangers' groups reach "
            f"{', '.join(f'{s:.2f}' for s in result['strangers_groups_top_scores'][:5])}. Marking every group above a "
            "cut on that score as an enrolled person's missed photos too (not shown), beside the shipped marking:\n\n" + "\n".join(rows))
    return text + (f"\n\n`python benchmarks/library_missed_groups.py --data ../shared/data --out "
                   f"benchmarks/results/library_missed_groups.json`, on the library above. Measured on: "
                   f"{cpu_text(result)}, model {model_text(result)}, {result['provenance']['date'][:10]}.")
