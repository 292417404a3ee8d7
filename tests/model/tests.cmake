mblin_add_test(test_examples ${CMAKE_CURRENT_SOURCE_DIR}/model/test_examples.c)
mblin_add_test(test_model_errors ${CMAKE_CURRENT_SOURCE_DIR}/model/test_model_errors.c)
mblin_add_test(test_linearize ${CMAKE_CURRENT_SOURCE_DIR}/model/test_linearize.c)
mblin_add_test(test_outputs ${CMAKE_CURRENT_SOURCE_DIR}/model/test_outputs.c)
