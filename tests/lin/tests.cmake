# tests of src/lin are listed here
