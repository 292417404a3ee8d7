// The scale case (issue 67, item 6; bench/): link.geo's bar with elements of 3.7 mm, about 1e5
// degrees of freedom (34,000 nodes of quadratic tetrahedra). make_part.sh -j scale -g scale.geo
lc = 0.0037;
Include "link.geo";
