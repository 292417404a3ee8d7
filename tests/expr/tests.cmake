# tests of src/expr are listed here
