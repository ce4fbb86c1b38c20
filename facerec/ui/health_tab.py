"""Health: how well the enrolled faces separate, in plain words, read again whenever the tab opens.

Every figure is printed once from its unrounded value (`facerec.words.health.figure_text`), so the table and the
sentences beside it agree to the last digit; the confusable pairs show both whole faces.
"""

from __future__ import annotations

import gradio as gr

from facerec.words.threshold import threshold_sentence
from facerec.words.sightings import sightings_in_words
from facerec.ui.health_charts import policy_growth_plot, sightings_trend_plot, similarity_histogram
from facerec.faces.embedder_check import EmbedderCheck
from facerec.gallery.health import HealthReport
from facerec.words.health import (confusable_pairs_in_words, figure_text, health_in_words, pair_text,
                                  threshold_words)
from facerec.words.phrasing import plural
from facerec.metrics import MEDIAN_KEYS
from facerec.ui.actions import expose, page_door
from facerec.ui.context import AppContext
from facerec.ui.text import html_text
from facerec.ui.views import FACES_CSS, TABLE_CSS, face_tiles, figures_table, pair_tiles

HEADERS = ("metric", "value", "what it means")
WEAK_SHOWN = 20  # weak enrollments shown with their face (all are in the JSON)


def no_trend() -> dict:
    """No sightings yet: no empty plot box."""
    return gr.update(value=None, visible=False)


def build(context: AppContext) -> gr.Tab:
    """The Health tab, admin-only (`context.gate`)."""
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    with gr.Tab("Health", id="health") as tab:
        ok = gr.State(False)
        button = gr.Button("Check gallery health", variant="primary")
        status = gr.Markdown(elem_id="health-status")
        report_view = gr.HTML(css_template=TABLE_CSS, elem_id="health-report")
        # No label badge on a chart: each draws its own title, which the badge covered on a phone (#64 row 9)
        plot = gr.Plot(label="Nearest other person", show_label=False, elem_id="nearest-plot")
        sightings_view = gr.HTML(css_template=TABLE_CSS + FACES_CSS, elem_id="sightings-report")
        # Shown only with a trend to draw: an empty plot is a box with a broken-picture icon (#64 row 9, 390 px)
        trend_plot = gr.Plot(label="Trend of the faces seen", format="png", elem_id="sightings-trend", show_label=False,
                             visible=False)
        pairs_view = gr.HTML(css_template=FACES_CSS, label="Most confusable pairs", elem_id="confusable-pairs")
        details = gr.JSON(visible=False)
        growth_text = gr.Markdown(elem_id="policy-growth")
        growth_plot = gr.Plot(label="Threshold and expected true-match rate as the gallery grows", format="png",
                              show_label=False, elem_id="growth-plot")

    def health():
        report = gallery.health()
        people = services.directory
        heading, shown = confusable_pairs_in_words(report.confusable_pairs, report.threshold)
        pairs = []
        for pair in shown:
            left, right = people.get(pair["a_id"]), people.get(pair["b_id"])
            pairs.append((people.face_crop(left.face_ids[0]), people.face_crop(right.face_ids[0]),
                          f"{pair['a']} ~ {pair['b']}: {pair['similarity']:.3f}"))
        figure = similarity_histogram(report.nearest_other_similarities, report.threshold,
                                      "How close is each person to their nearest other person?")
        heading = f"<h3>{html_text(heading)}</h3>" if heading else ""
        worded = health_in_words(report)
        memory = worded["sightings"]
        weak = [(people.face_crop(people.get(w["identity_id"]).face_ids[0]),
                 f"{w['name']}: similarity {w['median_similarity']:.3f} over {plural(w['sightings'], 'sighting')}")
                for w in memory.get("weak_enrollments", [])[:WEAK_SHOWN]]
        trend = memory.get("trend") or []
        page = report_html(report, worded["readings"]) + embedder_html(services.maintenance.embedder_check)
        return {report_view: page, plot: figure, sightings_view: sightings_html(memory, weak),
                trend_plot: gr.update(value=sightings_trend_plot(trend, memory["trend_unit"], report.threshold),
                                      visible=True) if trend else no_trend(),
                pairs_view: heading + pair_tiles(pairs), details: worded,
                status: f"Checked {plural(report.identities, 'person', 'people')} and "
                        f"{plural(report.faces, 'face')}."}

    def ask_for_password():
        return {report_view: "", plot: None, pairs_view: "", details: None, sightings_view: "",
                trend_plot: no_trend(),
                status: "Type the admin password at the top of the page and press Check gallery health."}

    def no_growth(_succeeded=False):
        return {growth_text: "", growth_plot: None}

    def policy_growth(_succeeded):
        """How the threshold policy behaves as this gallery grows (the second plot), after a health check."""
        rule = services.thresholds.in_force(with_people=True)
        rows = services.thresholds.growth()
        shown = [r for r in rows if r.comparisons in (1, 10, 100, 1000, 10_000, 100_000, 1_000_000)]
        lines = ["**The threshold as the gallery grows.** A stranger is compared with every enrolled face, so the "
                 "more faces, the more chances of a wrong match: to keep the stranger-match rate at the accepted "
                 "level, the threshold rises with the gallery, and a new photo of an enrolled person clears it "
                 "less often.", "", f"Now: {threshold_sentence(rule)}", "",
                 "| enrolled faces | threshold | expected true-match rate |", "|---:|---:|---:|"]
        # A Markdown table: a table on the page, and the same readable text in the API answer and in a copy (it
        # was a code block of pipes, which the page showed as raw text).
        lines += [f"| {r.comparisons:,} | {r.threshold:.3f} | "
                  f"{'unknown' if r.true_match_rate is None else f'{r.true_match_rate:.0%}'} |" for r in shown]
        return {growth_text: "\n".join(lines), growth_plot: policy_growth_plot(rows, rule.comparisons)}

    password = context.gate.field
    event = expose([button.click, tab.select, password.submit], health, [password],
                   [report_view, plot, pairs_view, details], status, api_name="health", admin=context.gate,
                   ask=ask_for_password, ok=ok, also_clear=[sightings_view, trend_plot])
    # After the check, only when it succeeded (a failed one's password is not checked twice)
    growth, inputs = context.gate.guarded(policy_growth, [ok, password], ask=no_growth,
                                          skip=lambda succeeded: None if succeeded else no_growth())
    event.then(page_door(growth, [growth_plot], growth_text), inputs, [growth_text, growth_plot],
               api_visibility="private")
    return tab


def report_html(report: HealthReport, readings: dict[str, str]) -> str:
    """The health report: the gallery in one line, the figures with their `readings`, notes, suspected duplicates."""
    data = report.to_dict()
    lines = [f"<p><strong>{plural(report.identities, 'person', 'people')}, {plural(report.faces, 'face')}"
             f"</strong>, {threshold_words(report.score_threshold, report.threshold)}.</p>"]
    rows = [("ClosestIsPositiveAccuracy", figure_text(report.closest_is_positive_accuracy),
             readings["closest_is_positive_accuracy"])]
    rows += [(key, figure_text(report.median_distances[key]), readings[key]) for key in MEDIAN_KEYS]
    rows.append(("Nearest other person", figure_text(report.nearest_other_person),
                 readings["NearestOtherPerson"]))
    lines.append(figures_table(HEADERS, rows))
    lines += [f"<p><em>{html_text(note)}</em></p>" for note in report.notes]
    if readings.get("search_index"):
        lines.append(f"<p>{html_text(readings['search_index'])}</p>")
    if report.suspected_duplicates:
        listed = "; ".join(html_text(pair_text(pair)) for pair in data["suspected_duplicates"][:20])
        lines.append(f"<p><strong>Suspected duplicates</strong> (above the threshold): {listed}</p>")
    else:
        lines.append("<p>No suspected duplicates: no two people match each other above the threshold.</p>")
    return "\n".join(lines)


def embedder_html(check: EmbedderCheck) -> str:
    """Which arithmetic embeds faces on this server, in one paragraph (`facerec.faces.embedder_check`)."""
    if check.switched:
        return ("<p><strong>Embedder: exact graph.</strong> On this CPU the fast int8 kernels disagreed with the "
                f"model card's reference embeddings (lowest cosine {check.min_cosine:.4f}, below "
                f"{check.to_dict()['threshold']}), so faces are embedded with the model's exact arithmetic: the "
                "same embeddings as on every other CPU, but slower.</p>")
    if check.min_cosine is None:
        return f"<p>Embedder: fast int8 kernels, not checked ({html_text(check.reason)}).</p>"
    return ("<p>Embedder: fast int8 kernels, checked against the model card's reference embeddings on this CPU "
            f"(lowest cosine {check.min_cosine:.4f}).</p>")


def sightings_html(memory: dict, weak_tiles: list[tuple[bytes | None, str]]) -> str:
    """The sightings part (`sightings_in_words`), with the weak enrollments' table and faces."""
    words = sightings_in_words(memory)
    lines = ["<h3>Sightings</h3>", f"<p>{html_text(words.basis)}</p>"]
    if words.trend:
        lines.append(f"<p>{html_text(words.trend)}</p>")
    weak = memory.get("weak_enrollments") or []
    if words.weak and weak:
        rows = [(w["name"], f"{w['median_similarity']:.3f}", f"{plural(w['sightings'], 'sighting')}: "
                 + " ".join(w["reasons"])) for w in weak]
        lines += [f"<h3>Weak enrollments ({len(weak)})</h3><p>{html_text(words.weak)}</p>",
                  figures_table(("person", "median similarity", "why"), rows), face_tiles(weak_tiles)]
    elif words.weak:
        lines.append(f"<p>{html_text(words.weak)}</p>")
    return "\n".join(lines)
