<?php
// GET /opcache.php (not measured): whether OPcache serves this PHP-FPM, and
// how many cached scripts and hits it has, for bench/RESULTS.md.
$s = function_exists('opcache_get_status') ? opcache_get_status(false) : false;
header('Content-Type: application/json');
echo json_encode($s === false ? ['opcache_enabled' => false] : [
    'opcache_enabled' => $s['opcache_enabled'],
    'cached_scripts' => $s['opcache_statistics']['num_cached_scripts'],
    'hits' => $s['opcache_statistics']['hits'],
    'jit' => $s['jit']['enabled'] ?? false,
]), "\n";
