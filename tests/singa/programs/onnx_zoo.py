"""The stand-in for the ONNX model zoo that SINGA's examples/onnx programs download from: a
small CNN classifier built and exported here with autograd.onnx, and a model_config in the
form of SINGA's examples/onnx/training/model.json (the path, and where to cut the graph)."""
import os

import numpy as np

import autograd
import autograd.onnx


def download_model(folder, image_size=12, classes=10):
    """Write ``folder/tinycnn.onnx`` (random weights, seed 0) and return its model_config."""
    autograd.manual_seed(0)
    net = autograd.Sequential(autograd.Conv2d(1, 6, 3), autograd.ReLU(),
                              autograd.MaxPool2d(2, 2), autograd.Flatten(),
                              autograd.Linear(6 * ((image_size - 2) // 2) ** 2, classes))
    path = os.path.join(folder, "tinycnn.onnx")
    proto = autograd.onnx.export(net, [np.zeros((1, 1, image_size, image_size), np.float32)],
                                 path)
    nodes = [node for node in proto.graph.node if node.op_type != "Constant"]
    flatten = [node.op_type for node in nodes].index("Reshape")     # Flatten's node
    # SINGA's last_layers: a negative k keeps the nodes up to index (k + 1) mod n
    return {"path": path, "last_layers": flatten - 1 - len(nodes),
            "last_layers_dim": net[4].in_features}
