def accuracy(out, y):
    return float((out.argmax(axis=1) == y.astype("float32")).sum().asscalar())
