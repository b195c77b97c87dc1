<?php
// GET /api/php/get behind nginx: the query parameters as the bare Echo
// reference answers them, from $_GET as a PHP page reads them. Keys are
// sorted as Go's encoder sorts them; (object) keeps an empty set `{}`.
// PHP's own convention differs for a repeated key (?a=1&a=2 is "2" here,
// ["1","2"] in Go) and json_encode escapes < > & differently: the benchmark's
// query has neither.
$params = $_GET;
ksort($params, SORT_STRING);
header('Content-Type: application/json');
echo json_encode(['async' => true, 'query_params' => (object)$params], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
