"""One way to open an onnxruntime session (CPU, quiet, a chosen thread count), lazily and once per object."""

from __future__ import annotations

from facerec.faces.loaded_once import LoadedOnce


class LazySession:
    """Creates the `onnxruntime.InferenceSession` on first use; safe to share between threads.

    `model` is a file path or the model's bytes; `num_threads` 0 lets onnxruntime use every core. `exact` turns
    graph optimisations off: onnxruntime then runs the graph node by node as written (an int8 QDQ graph as fp32
    operators between its quantise/dequantise steps), the same arithmetic on every CPU, instead of fusing it into
    int8 kernels whose results depend on the processor (`facerec.faces.embedder_check`).
    """

    def __init__(self, model, num_threads: int = 0, exact: bool = False) -> None:
        self._model = model
        self.num_threads = num_threads
        self.exact = exact
        self._session = LoadedOnce(self._open)

    def get(self):
        return self._session.get()

    def _open(self):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.num_threads
        options.log_severity_level = 3
        if self.exact:
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        # Idle worker threads would otherwise spin for a while after each run, taking the cores
        # the gallery search (a multi-threaded BLAS product) needs right after embedding.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # No arena: onnxruntime's own pool kept the peak of every concurrent run for good (a flood of
        # 50-face photos held the app above 1.8 GB); freed tensors go back to the system instead.
        options.enable_cpu_mem_arena = False
        model = self._model() if callable(self._model) else self._model
        return ort.InferenceSession(model if isinstance(model, bytes) else str(model), options,
                                    providers=["CPUExecutionProvider"])
