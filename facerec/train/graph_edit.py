"""Edits appended after an ONNX embedder's output (centering, the similarity map), and their removal.

Both edits keep the file an onnxruntime-only embedder with the same input and output names: the network's own
output is renamed (`<output><suffix>`), the edit's nodes read it and write the original output name. Removing an
edit undoes exactly that, which is what a warm start or a fresh edit of the same network needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence


def reroute_output(graph, suffix: str) -> tuple[str, str]:
    """Rename the node output that is the graph's output to `<output><suffix>`; returns (that new name, the
    graph's output name), for the edit's nodes to read from and write to."""
    output = graph.output[0].name
    producer = next(node for node in graph.node if output in node.output)
    rerouted = output + suffix
    producer.output[list(producer.output).index(output)] = rerouted
    return rerouted, output


def without_edit(model: str | Path, out: str | Path, nodes: Sequence[str], initializers: Sequence[str],
                 suffix: str) -> Path:
    """Write `model` without the edit made of `nodes` and `initializers` that `reroute_output(graph, suffix)`
    put after its output; a model without that edit is copied."""
    import onnx

    proto = onnx.load(str(model))
    graph = proto.graph
    edit = [node for node in graph.node if node.name in nodes]
    if edit:
        output = graph.output[0].name
        for node in edit:
            graph.node.remove(node)
        producer = next(node for node in graph.node if output + suffix in node.output)
        producer.output[list(producer.output).index(output + suffix)] = output
        for init in [init for init in graph.initializer if init.name in initializers]:
            graph.initializer.remove(init)
    onnx.checker.check_model(proto)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, str(out))
    return Path(out)
