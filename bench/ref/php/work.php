<?php
// GET /api/bench/work behind nginx: the 100 records of api/bench/work.go,
// keys in Go's order (json_encode writes a whole float as 3, as Go does).
$n = 100;
$recs = [];
for ($i = 0; $i < $n; $i++) {
    $recs[] = [
        'active' => $i % 2 == 0,
        'id' => $i,
        'name' => 'record ' . $i,
        'score' => $i * 1.5,
        'tags' => ['alpha', 'beta'],
    ];
}
header('Content-Type: application/json');
echo json_encode(['count' => $n, 'records' => $recs]), "\n";
