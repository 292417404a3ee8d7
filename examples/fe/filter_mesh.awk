# Keeps of gmsh's Abaqus/CalculiX mesh (gmsh -format inp) what a CalculiX deck of solid elements
# needs: *NODE, the 3-D elements (*ELEMENT, type=C3D...), the element sets made only of those
# elements (the physical volumes) and every node set (the physical groups' nodes). gmsh also writes
# the elements of the physical surfaces (type=CPS6/CPS3) that name the end faces; CalculiX would
# take them for plane-stress elements and stop ("*ERROR in gen3delem"), so they and their element
# sets are left out. Usage: awk -f filter_mesh.awk gmsh.inp > mesh.inp
function flush() {
    if (buf != "" && keepset) printf "%s", buf
    buf = ""; inset = 0
}
/^\*/ && !/^\*\*/ {
    flush()
    head = toupper($0); gsub(/ /, "", head)
    mode = "drop"
    if (head ~ /^\*NODE(,|$)/ || head ~ /^\*NSET,/) mode = "keep"
    else if (head ~ /^\*ELEMENT,/ && head ~ /TYPE=C3D/) mode = "elem"
    else if (head ~ /^\*ELSET,/) { mode = "set"; inset = 1; keepset = 1; buf = $0 "\n"; next }
    if (mode != "drop") print
    next
}
/^\*\*/ { next }
mode == "keep" { print; next }
mode == "elem" { split($0, f, ","); kept[f[1] + 0] = 1; print; next }
mode == "set" {
    buf = buf $0 "\n"
    n = split($0, f, ",")
    for (i = 1; i <= n; i++) { v = f[i]; gsub(/ /, "", v); if (v != "" && !((v + 0) in kept)) keepset = 0 }
    next
}
END { flush() }
