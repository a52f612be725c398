strides = 8,16
anchors = 1,2;3,4
