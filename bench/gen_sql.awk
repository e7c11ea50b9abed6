# SPDX-License-Identifier: MIT
# Generate the SQL script of the sqlite3 workload: tables, many single-row
# INSERTs (each one parsed, as a real application would send them), indexes,
# aggregate and point queries, updates and deletes.
#
# Usage: awk -v rows=N -f gen_sql.awk > script.sql
# The output depends only on N: the PRNG is a Park-Miller generator written
# here (awk's rand() differs between mawk and gawk), whose products stay below
# 2^53 and so are exact in awk's double arithmetic.
function rnd(n) {
    seed = (seed * 16807) % 2147483647
    return seed % n
}
function word(len,    s, i) {
    s = ""
    for (i = 0; i < len; i++)
        s = s substr("abcdefghijklmnopqrstuvwxyz", rnd(26) + 1, 1)
    return s
}
BEGIN {
    if (rows < 100) {
        print "gen_sql.awk: rows must be at least 100" > "/dev/stderr"
        exit 2
    }
    seed = 20261121
    customers = int(rows / 10)
    print "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, score REAL);"
    print "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER NOT NULL, item TEXT,"
    print "                    qty INTEGER, price REAL, note TEXT);"
    print "BEGIN;"
    for (i = 1; i <= customers; i++)
        printf "INSERT INTO customer VALUES(%d,'%s','city-%d',%d.%d);\n", i, word(5 + rnd(12)),
               rnd(50), rnd(1000), rnd(100)
    for (i = 1; i <= rows; i++)
        printf "INSERT INTO orders(customer,item,qty,price,note) VALUES(%d,'item-%d',%d,%d.%02d,'%s');\n",
               1 + rnd(customers), rnd(2000), 1 + rnd(20), rnd(500), rnd(100), word(rnd(40))
    print "COMMIT;"
    print "CREATE INDEX orders_customer ON orders(customer);"
    print "CREATE INDEX orders_item ON orders(item, qty);"
    print "CREATE INDEX customer_city ON customer(city);"
    print "SELECT city, count(*), avg(score) FROM customer GROUP BY city ORDER BY city;"
    print "SELECT c.city, sum(o.qty * o.price) AS total FROM orders o JOIN customer c ON c.id = o.customer"
    print "  GROUP BY c.city ORDER BY total DESC LIMIT 5;"
    print "SELECT item, count(*), max(note) FROM orders WHERE qty > 5 GROUP BY item ORDER BY 2 DESC LIMIT 10;"
    for (i = 0; i < rows / 20; i++)
        printf "SELECT count(*), sum(qty) FROM orders WHERE customer = %d;\n", 1 + rnd(customers)
    print "BEGIN;"
    for (i = 0; i < rows / 20; i++)
        printf "UPDATE orders SET note = note || '%s' WHERE id = %d;\n", word(8), 1 + rnd(rows)
    print "COMMIT;"
    print "DELETE FROM orders WHERE qty % 3 = 0;"
    print "SELECT count(*), sum(price) FROM orders;"
    print "DROP INDEX orders_item;"
    print "SELECT customer, group_concat(item) FROM orders GROUP BY customer HAVING count(*) > 12 LIMIT 3;"
    print "DELETE FROM customer WHERE id NOT IN (SELECT customer FROM orders);"
    print "VACUUM;"
    print "SELECT count(*) FROM customer;"
}
