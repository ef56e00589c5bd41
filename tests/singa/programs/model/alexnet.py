"""A small AlexNet in the style of SINGA's examples/cnn/model/alexnet.py: strided and padded
Conv2d, separate ReLU layers, Dropout(), AvgPool2d(3, 2, padding=0), lazy Linear layers."""
from singa import layer
from singa import model


class AlexNet(model.Model):

    def __init__(self, num_classes=10, num_channels=1):
        super(AlexNet, self).__init__()
        self.num_classes = num_classes
        self.input_size = 16
        self.dimension = 4
        self.conv1 = layer.Conv2d(num_channels, 8, 5, stride=1, padding=2)
        self.conv2 = layer.Conv2d(8, 12, 3, padding=1)
        self.pooling1 = layer.MaxPool2d(2, 2, padding=0)
        self.avg_pooling1 = layer.AvgPool2d(3, 2, padding=0)
        self.relu1 = layer.ReLU()
        self.relu2 = layer.ReLU()
        self.relu3 = layer.ReLU()
        self.flatten = layer.Flatten()
        self.dropout1 = layer.Dropout()
        self.linear1 = layer.Linear(32)
        self.linear2 = layer.Linear(num_classes)
        self.softmax_cross_entropy = layer.SoftMaxCrossEntropy()

    def forward(self, x):
        y = self.pooling1(self.relu1(self.conv1(x)))
        y = self.avg_pooling1(self.relu2(self.conv2(y)))
        y = self.dropout1(self.flatten(y))
        y = self.relu3(self.linear1(y))
        return self.linear2(y)

    def train_one_batch(self, x, y, dist_option, spars):
        out = self.forward(x)
        loss = self.softmax_cross_entropy(out, y)
        if dist_option == 'plain':
            self.optimizer(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


def create_model(pretrained=False, **kwargs):
    return AlexNet(**kwargs)
