"""A two-block Xception in the style of SINGA's examples/cnn/model/xceptionnet.py: blocks
whose layers live in a list attribute that is also passed to register_layers, separable
convolutions with positional stride and padding, a strided MaxPool2d(3, s, p + 1)."""
from singa import layer
from singa import model


class Block(layer.Layer):

    def __init__(self, in_filters, out_filters, reps, strides=1, padding=0,
                 start_with_relu=True):
        super(Block, self).__init__()
        if out_filters != in_filters or strides != 1:
            self.skip = layer.Conv2d(in_filters, out_filters, 1, stride=strides,
                                     padding=padding, bias=False)
            self.skipbn = layer.BatchNorm2d(out_filters)
        else:
            self.skip = None
        self.layers = []
        filters = in_filters
        for i in range(reps):
            self.layers.append(layer.ReLU())
            self.layers.append(layer.SeparableConv2d(filters, out_filters, 3, stride=1,
                                                     padding=1, bias=False))
            self.layers.append(layer.BatchNorm2d(out_filters))
            filters = out_filters
        if not start_with_relu:
            self.layers = self.layers[1:]
        if strides != 1:
            self.layers.append(layer.MaxPool2d(3, strides, padding + 1))
        self.register_layers(*self.layers)
        self.add = layer.Add()

    def forward(self, x):
        y = self.layers[0](x)
        for lyr in self.layers[1:]:
            y = lyr(y)
        skip = self.skipbn(self.skip(x)) if self.skip is not None else x
        return self.add(y, skip)


class Xception(model.Model):

    def __init__(self, num_classes=10, num_channels=3):
        super(Xception, self).__init__()
        self.num_classes = num_classes
        self.input_size = 16
        self.dimension = 4
        self.conv1 = layer.Conv2d(num_channels, 8, 3, 1, 1, bias=False)
        self.bn1 = layer.BatchNorm2d(8)
        self.relu1 = layer.ReLU()
        self.block1 = Block(8, 12, 2, 2, padding=0, start_with_relu=False)
        self.block2 = Block(12, 12, 1, 1, start_with_relu=True)
        self.conv3 = layer.SeparableConv2d(12, 16, 3, 1, 1)
        self.bn3 = layer.BatchNorm2d(16)
        self.relu3 = layer.ReLU()
        self.globalpooling = layer.MaxPool2d(8, 1)
        self.flatten = layer.Flatten()
        self.fc = layer.Linear(num_classes)
        self.softmax_cross_entropy = layer.SoftMaxCrossEntropy()

    def forward(self, x):
        x = self.relu1(self.bn1(self.conv1(x)))
        x = self.block2(self.block1(x))
        x = self.relu3(self.bn3(self.conv3(x)))
        return self.fc(self.flatten(self.globalpooling(x)))

    def train_one_batch(self, x, y, dist_option, spars):
        out = self.forward(x)
        loss = self.softmax_cross_entropy(out, y)
        if dist_option == 'plain':
            self.optimizer(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


def create_model(pretrained=False, **kwargs):
    return Xception(**kwargs)
