# What bench/peers-table and bench/peers-spread share about a report of ../shared/peers/run.sh
# (each runs `awk -f bench/peers.awk -f PROGRAM REPORT...`): the sections, the rows and the peer
# groups of each block geometry.

# A size as the tables write it: 1M for 1000000, URLs for the URL section.
function label(n) {
    if (n == "urls") return "URLs"
    if (n >= 1e9 && n % 1e9 == 0) return (n / 1e9) "G"
    if (n >= 1e6 && n % 1e6 == 0) return (n / 1e6) "M"
    if (n >= 1e3 && n % 1e3 == 0) return (n / 1e3) "K"
    return n
}

# The section a header line opens: its key count, "urls", or "" (another section); "-" for a line
# that is no header.
function section_of(line,    f, n) {
    if (line ~ /^## pre-hashed 64-bit keys, n = /) {
        n = split(line, f, " ")
        return f[n] + 0
    }
    if (line ~ /^## URL strings/) return "urls"
    if (line ~ /^## /) return ""
    return "-"
}

# A row of a section's table: sets row_name and row_ns[1..3] (insert / positive / negative, ns a
# key) and returns 1; 0 for any other line.
function parse_row(line,    left, n, f, i) {
    if (line !~ /^(sb |libfilter|ff |rocksdb|boost|BASE)/ || line !~ / \| /) return 0
    left = substr(line, 1, index(line, " | ") - 1)
    n = split(left, f, " ")
    if (n < 9) return 0
    row_name = f[1]
    for (i = 2; i <= n - 8; i++) row_name = row_name " " f[i]
    row_ns[1] = f[n - 2]; row_ns[2] = f[n - 1]; row_ns[3] = f[n]
    return 1
}

# Whether a row is in a group: the peers of the 512-bit blocks (k8) or of the 256-bit ones
# (parquet), their single-key rows, every peer (any), or the line-read rows (line).
function member(row, group) {
    if (group == "k8") return row ~ /^(boost multiblock64|ff BlockedBloom512|rocksdb)/
    if (group == "k8 single") return row ~ /^(boost multiblock64<8> single|ff BlockedBloom512 Add\/Find|rocksdb FastLocalBloom single)/
    if (group == "parquet") return row ~ /^(libfilter|boost multiblock32|ff BlockedBloom256)/
    if (group == "parquet single") return row ~ /^(libfilter block|boost multiblock32<8> single|ff BlockedBloom256 Add\/Find)/
    if (group == "any") return row ~ /^(boost|ff Blocked|rocksdb|libfilter)/
    if (group == "line") return row ~ /^BASE line/
    return 0
}
