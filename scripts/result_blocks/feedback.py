"""Feedback that teaches safely (#62): corrections learned, strangers' claims refused, morph chains, and the rate
a claim is verified at, swept."""

from __future__ import annotations

from result_blocks.common import cpu_text, load, model_text


def claims_block() -> str:
    """#62: corrections learned, strangers' claims refused, morph chains, "not this person" (benchmarks/claims.py)."""
    result = load("claims")
    if not result:
        return "(not measured yet: `python benchmarks/claims.py --out benchmarks/results/claims.json`)"
    arms = result["arms"]
    rule, control = arms["corroborated"], arms["not_corroborated"]
    lines = ["| | names through learned faces corroborated (shipped) | not corroborated (control) |", "|---|---|---|"]

    def row(label: str, value) -> None:
        lines.append(f"| {label} | {value(rule)} | {value(control)} |")

    row("missed faces corrected: learned", lambda a: f"{a['corrections']['learned']} of "
        f"{a['corrections']['missed_people']} ({a['corrections']['learned_share']:.0%})")
    row("DIR of their other photos, before / after one correction each", lambda a: (
        f"{a['corrections']['dir_before']:.3f} / {a['corrections']['dir_after_one_correction_each']:.3f}"))
    row("FPIR after (strangers' photos named)", lambda a: f"{a['corrections']['fpir_after']:.2%}")
    row("a stranger corrected to a random enrolled person: refused", lambda a: (
        f"{a['stranger_claims']['refused_share_random']:.0%}"))
    row("... corrected to the enrolled person they most resemble: refused", lambda a: (
        f"{a['stranger_claims']['refused_share_look_alike']:.0%}"))
    row("morph chains: the stranger's photos named as the person (of 20)", lambda a: ", ".join(
        f"{c['stranger_photos_named_as_person']}" for c in a["morph_chains"]))
    reasons = "; ".join(f"{count} {why}" for why, count in rule["corrections"]["not_learned_because"].items())
    text = "\n".join(lines) + (f"\n\nCorrections not learned: {reasons}. Morph chains: "
                               + ", ".join(f"{c['person'].replace('_', ' ')} towards {c['stranger'].replace('_', ' ')}"
                                           f" ({c['learned_blends']} blends learned)" for c in rule["morph_chains"])
                               + ".")
    lines = ["| accepted rate | strangers named, said \"not them\" | repeat false names on their other photos, "
             "before / after | enrolled people's DIR, before / after |", "|---|---|---|---|"]
    for key in sorted(k for k in rule if k.startswith("not_this_person_at_")):
        part = rule[key]
        lines.append(f"| {float(key.rsplit('_', 1)[1]):.0%} | {part['strangers_named']} | "
                     f"{part['repeat_false_names_before']} / {part['repeat_false_names_after']} (of "
                     f"{part['their_other_photos']}) | {part['enrolled_dir_before']:.3f} / "
                     f"{part['enrolled_dir_after']:.3f} ({part['enrolled_searches']:,} searches) |")
    protocol = result["protocol"]
    fused = load("claims_fused")
    if fused:
        arm = fused["arms"]["corroborated"]
        corrections, claims = arm["corrections"], arm["stranger_claims"]
        text += ("\n\nThe same with the fused pack (`--pack facerec-dlib-fused`): " + _learned_words(corrections)
                 + f", DIR {corrections['dir_before']:.3f} / {corrections['dir_after_one_correction_each']:.3f}, a "
                 f"stranger's claim to a random person refused {claims['refused_share_random']:.0%}, morph chains "
                 + ", ".join(str(c["stranger_photos_named_as_person"]) for c in arm["morph_chains"]) + " of 20.")
    variant = load("claims_nearest_variant")
    if variant:
        arm = variant["arms"]["corroborated"]
        corrections, claims = arm["corrections"], arm["stranger_claims"]
        text += ("\n\nA looser claim, measured and not shipped: when X is already the face's nearest person, the claim "
                 "checked at five times the accepted rate (5%). M" + _learned_words(corrections)[1:]
                 + f", but a stranger corrected to the person they most resemble was refused only "
                 f"{claims['refused_share_look_alike']:.0%} of the time (random person: "
                 f"{claims['refused_share_random']:.0%}): short of the 80% it was for, and it gives up the look-alike "
                 f"check. {cpu_text(variant)}, {variant['provenance']['date'][:10]}.")
    return (text + "\n\n" + "\n".join(lines) + f"\n\n{protocol['enrolled_people']} held-out people enrolled from one "
            f"photo, {protocol['strangers']} held-out strangers ({protocol['held_out']}). `python benchmarks/claims.py "
            f"--data ../shared/data --out benchmarks/results/claims.json`. {cpu_text(result)}, model "
            f"{model_text(result)}, {result['provenance']['date'][:10]}.")


def _learned_words(corrections: dict) -> str:
    """"missed faces corrected and learned N of M (share; not learned: ...)" of one arm of benchmarks/claims.py."""
    return (f"missed faces corrected and learned {corrections['learned']} of {corrections['missed_people']} "
            f"({corrections['learned_share']:.0%}; not learned: "
            + "; ".join(f"{n} {why}" for why, n in corrections["not_learned_because"].items()) + ")")


def claim_rates_block() -> str:
    """#62: the rate a claim is verified at, swept on the same claims (benchmarks/claim_rates.py)."""
    result = load("claim_rates")
    if not result:
        return ("(not measured yet: `python benchmarks/claim_rates.py --data ../shared/data --out "
                "benchmarks/results/claim_rates.json`)")
    rows = ["| a claim verified at (one comparison) | missed faces corrected: learned | not learned | a stranger's "
            "claim refused: to a random person / to their look-alike |", "|---|---|---|---|"]
    for rate in result["rates"]:
        why = "; ".join(f"{n} {reason}" for reason, n in rate["not_learned_because"].items())
        rows.append(f"| {rate['rate']:.0%}{' (shipped)' if rate['rate'] == 0.01 else ''} | {rate['learned']} of "
                    f"{rate['missed']} ({rate['learned_share']:.1%}) | {why} | {rate['refused_share_random']:.1%} / "
                    f"{rate['refused_share_look_alike']:.1%} |")
    protocol = result["protocol"]
    return ("\n".join(rows) + f"\n\nThe claims of the table above ({protocol['enrolled_people']} held-out people "
            f"enrolled, {protocol['strangers']} held-out strangers, each claim through the app's feedback path and "
            "undone at once). Shares to one decimal, beside the issue's bars. `python benchmarks/claim_rates.py --data ../shared/data --out "
            f"benchmarks/results/claim_rates.json`. {cpu_text(result)}, model {model_text(result)}, "
            f"{result['provenance']['date'][:10]}.")
