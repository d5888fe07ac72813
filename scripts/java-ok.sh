# Sourced by scripts/bootstrap.sh and .ci/run: whether a Java 17 or later is on PATH (DynamoDB Local needs it).
java_ok() { command -v java >/dev/null 2>&1 && java -version 2>&1 | grep -qE 'version "(1[7-9]|2[0-9])'; }
