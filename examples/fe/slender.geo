// The slender solid beam of the check against mblin's beam bodies (docs/fe-parts.md, "Checks"):
// link.geo at L = 1 m (L/a = 50), elements of 10 mm (two across the section).
L = 1.0;
lc = 0.01;
Include "link.geo";
