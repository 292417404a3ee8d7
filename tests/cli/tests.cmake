# tests of src/cli are listed here
