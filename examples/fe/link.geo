// A flexible link: a straight aluminium bar of square section, meshed with quadratic tetrahedra
// (CalculiX C3D10). The bar runs along x from x = 0 (end A) to x = L (end B), its section centred
// on the x axis. Override any parameter on gmsh's command line, e.g.
//   gmsh -3 link.geo -setnumber L 1.0 -setnumber lc 0.01 -format inp -o link_mesh.inp
// Physical groups (gmsh writes them as node sets with -setnumber Mesh.SaveGroupsOfNodes 1):
//   END_A, END_B: the nodes of the two end faces; BAR: the whole volume (its elements).
// Units: SI (m); the deck's material is in Pa and kg/m^3.
SetFactory("OpenCASCADE");
DefineConstant[
  L = {0.5, Name "link length (m)"},
  a = {0.02, Name "section side (m)"},
  lc = {0.02, Name "largest element size (m)"},
  order = {2, Name "element order (2: C3D10)"}
];
Box(1) = {0, -a/2, -a/2, L, a, a};
Physical Volume("BAR") = {1};
// the faces of the box at x = 0 and x = L
Physical Surface("END_A") = Surface In BoundingBox{-a/10, -a, -a, a/10, a, a};
Physical Surface("END_B") = Surface In BoundingBox{L - a/10, -a, -a, L + a/10, a, a};
Mesh.CharacteristicLengthMax = lc;
Mesh.ElementOrder = order;
Mesh.SecondOrderLinear = 1;   // straight edges: the mid-side nodes exactly halfway
