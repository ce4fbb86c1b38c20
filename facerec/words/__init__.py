"""Numbers into words, for every interface (page, REST, CLI): the threshold's sentence (`threshold`) and Health's
readings and trend (`health`). The gallery and its parts return numbers; the interfaces call these. (The one-line
errors the parts raise are worded where they are raised, from `facerec.messages`.)"""
