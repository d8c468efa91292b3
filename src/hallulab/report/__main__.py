from hallulab.report.page import main

main()
