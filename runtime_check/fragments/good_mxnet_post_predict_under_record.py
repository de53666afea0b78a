# The correct twin of bad_mxnet_post_predict_under_record.py: the prediction is made without record().
pred = net(x_test)
print(nd.argmax(pred, axis=1))
