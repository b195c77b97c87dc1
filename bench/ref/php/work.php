<?php
// GET /api/bench/work behind nginx: the 100 records of api/bench/work.go,
// keys in Go's order. The score is $i * 3 / 2, which PHP keeps an int when
// it is whole, so that it is encoded 3 and not 3.0 (as Go encodes it).
$n = 100;
$recs = [];
for ($i = 0; $i < $n; $i++) {
    $recs[] = [
        'active' => $i % 2 == 0,
        'id' => $i,
        'name' => 'record ' . $i,
        'score' => $i * 3 / 2,
        'tags' => ['alpha', 'beta'],
    ];
}
header('Content-Type: application/json');
echo json_encode(['count' => $n, 'records' => $recs]), "\n";
