"""A two-stage residual network in the style of SINGA's examples/cnn/model/resnet.py: blocks
kept in a local list behind a closure (so only register_layers makes them sub-layers), a
downsample closure over a conv and a BatchNorm2d, Add, AvgPool2d(k, stride=1)."""
from singa import layer
from singa import model


class BasicBlock(layer.Layer):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super(BasicBlock, self).__init__()
        self.conv1 = layer.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = layer.BatchNorm2d(planes)
        self.conv2 = layer.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = layer.BatchNorm2d(planes)
        self.relu1 = layer.ReLU()
        self.add = layer.Add()
        self.relu2 = layer.ReLU()
        self.downsample = downsample

    def forward(self, x):
        residual = x
        out = self.relu1(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            residual = self.downsample(x)
        return self.relu2(self.add(out, residual))


class ResNet(model.Model):

    def __init__(self, block, layers, num_classes=10, num_channels=3):
        self.inplanes = 8
        super(ResNet, self).__init__()
        self.num_classes = num_classes
        self.input_size = 16
        self.dimension = 4
        self.conv1 = layer.Conv2d(num_channels, 8, 3, stride=1, padding=1, bias=False)
        self.bn1 = layer.BatchNorm2d(8)
        self.relu = layer.ReLU()
        self.maxpool = layer.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1, layers1 = self._make_layer(block, 8, layers[0])
        self.layer2, layers2 = self._make_layer(block, 16, layers[1], stride=2)
        self.avgpool = layer.AvgPool2d(4, stride=1)
        self.flatten = layer.Flatten()
        self.fc = layer.Linear(num_classes)
        self.softmax_cross_entropy = layer.SoftMaxCrossEntropy()
        self.register_layers(*layers1, *layers2)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            conv = layer.Conv2d(self.inplanes, planes * block.expansion, 1, stride=stride,
                                bias=False)
            bn = layer.BatchNorm2d(planes * block.expansion)

            def _downsample(x):
                return bn(conv(x))

            downsample = _downsample
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))

        def forward(x):
            for blk in layers:
                x = blk(x)
            return x

        return forward, layers

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(self.flatten(self.avgpool(x)))

    def train_one_batch(self, x, y, dist_option, spars):
        out = self.forward(x)
        loss = self.softmax_cross_entropy(out, y)
        if dist_option == 'plain':
            self.optimizer(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


def resnet_small(pretrained=False, **kwargs):
    return ResNet(BasicBlock, [1, 1], **kwargs)
