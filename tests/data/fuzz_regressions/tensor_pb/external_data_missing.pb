€€€€€ j
locationmissing.binp