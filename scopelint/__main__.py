from scopelint.cli import run

run()
