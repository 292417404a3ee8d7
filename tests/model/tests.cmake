# tests of src/model are listed here
