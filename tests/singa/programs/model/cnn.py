"""A small CNN in the style of SINGA's examples/cnn/model/cnn.py: fused activation="RELU",
SINGA's lazy Linear(out_features), a train_one_batch that dispatches on dist_option."""
from singa import layer
from singa import model


class CNN(model.Model):

    def __init__(self, num_classes=10, num_channels=1):
        super(CNN, self).__init__()
        self.num_classes = num_classes
        self.input_size = 12
        self.dimension = 4
        self.conv1 = layer.Conv2d(num_channels, 6, 3, padding=1, activation="RELU")
        self.conv2 = layer.Conv2d(6, 8, 3, padding=0, activation="RELU")
        self.pooling1 = layer.MaxPool2d(2, 2, padding=0)
        self.pooling2 = layer.MaxPool2d(2, 2, padding=0)
        self.flatten = layer.Flatten()
        self.linear1 = layer.Linear(24)
        self.relu = layer.ReLU()
        self.linear2 = layer.Linear(num_classes)
        self.softmax_cross_entropy = layer.SoftMaxCrossEntropy()

    def forward(self, x):
        y = self.pooling1(self.conv1(x))
        y = self.pooling2(self.conv2(y))
        y = self.relu(self.linear1(self.flatten(y)))
        return self.linear2(y)

    def train_one_batch(self, x, y, dist_option, spars):
        out = self.forward(x)
        loss = self.softmax_cross_entropy(out, y)
        if dist_option == 'plain':
            self.optimizer(loss)
        elif dist_option == 'half':
            self.optimizer.backward_and_update_half(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


def create_model(pretrained=False, **kwargs):
    return CNN(**kwargs)
