# tests of src/la are listed here
