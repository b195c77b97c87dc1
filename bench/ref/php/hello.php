<?php
// GET /api/hello behind nginx: the body of the bare Echo reference
// (bench/cmd/ref), with the newline Echo's encoder ends it with.
header('Content-Type: application/json');
echo json_encode(['message' => 'hello']), "\n";
