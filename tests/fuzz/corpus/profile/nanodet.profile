head = nanodet
reg_max = 7
# comment

detr_scores = softmax
