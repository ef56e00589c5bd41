"""A model run by onnxruntime on the CPU: the independent reference of the export tests."""


def run_onnxruntime(proto, feeds):
    """The outputs of the ModelProto ``proto`` for the input arrays ``feeds`` (name: array)."""
    import onnxruntime           # here: collecting this module must not need the onnx extra
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, feeds)
